package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/schema"
)

const summarySchema = `{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"],"additionalProperties":false}`

// TestStructuredOutputWithTools: the calls pass unchecked by the schema
// (they are not the answer); the answer after the results conforms.
func TestStructuredOutputWithTools(t *testing.T) {
	a := agent.New(offline.New(offline.Config{}))
	tools := []runner.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}
	req := runner.Request{Input: []runner.Message{{Role: "user", Content: "lookup cats"}}, Tools: tools,
		OutputSchema: json.RawMessage(summarySchema), SchemaName: "s", Stream: true}
	var frags int
	res, err := a.Run(t.Context(), req, func(ev runner.Event) error {
		if ev.ToolCall != nil {
			frags++
		}
		return nil
	})
	if err != nil || len(res.ToolCalls) != 1 || res.FinishReason != "tool_calls" || frags != 1 || res.Attempts != 1 {
		t.Fatalf("first turn: %+v, %d fragments, %v", res, frags, err)
	}
	req.Input = append(req.Input, runner.Message{Role: "assistant", ToolCalls: res.ToolCalls},
		runner.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "cats purr"})
	res, err = a.Run(t.Context(), req, nil)
	if err != nil || len(res.ToolCalls) != 0 {
		t.Fatalf("second turn: %+v, %v", res, err)
	}
	s, _ := schema.Compile(json.RawMessage(summarySchema))
	if err := s.Validate([]byte(res.Text)); err != nil {
		t.Fatalf("final answer %s: %v", res.Text, err)
	}
}

func TestCallsOutsideTheOfferAreRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		choice runner.ToolChoice
		called string
	}{
		{"not offered", runner.ToolChoice{}, "rm_rf"},
		{"choice none", runner.ToolChoice{Mode: "none"}, "lookup"},
		{"another function", runner.ToolChoice{Mode: "function", Name: "other"}, "lookup"},
	} {
		s := &stubCalls{call: runner.ToolCall{ID: "c", Name: c.called, Arguments: "{}"}}
		_, err := agent.New(s).Run(t.Context(), runner.Request{Input: user, ToolChoice: c.choice,
			Tools: []runner.Tool{{Name: "lookup"}, {Name: "other"}}}, nil)
		if !errors.Is(err, runner.ErrProvider) {
			t.Errorf("%s: err %v, want a provider error", c.name, err)
		}
	}
}

// stubCalls answers with one fixed call, whatever it is asked.
type stubCalls struct{ call runner.ToolCall }

func (s *stubCalls) Name() string { return "stub" }

func (s *stubCalls) Generate(_ context.Context, _ runner.ProviderRequest, _ func(runner.Event) error) (runner.Result, error) {
	return runner.Result{FinishReason: "tool_calls", ToolCalls: []runner.ToolCall{s.call}}, nil
}
