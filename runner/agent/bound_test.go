package agent_test

import (
	"context"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
)

// threeCalls streams and returns three calls of lookup and keeps the
// request it was given.
type threeCalls struct{ got runner.ProviderRequest }

func (s *threeCalls) Name() string { return "three" }

func (s *threeCalls) Generate(_ context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	s.got = req
	res := runner.Result{FinishReason: "tool_calls"}
	for i, id := range []string{"c1", "c2", "c3"} {
		c := runner.ToolCall{ID: id, Name: "lookup", Arguments: "{}"}
		if err := emit(runner.Event{ToolCall: &runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}}); err != nil {
			return runner.Result{}, err
		}
		res.ToolCalls = append(res.ToolCalls, c)
	}
	return res, nil
}

// max_tool_calls: the answer keeps the first MaxToolCalls calls, streamed
// and in the result; one call at most asks the model for no parallel calls.
// The upstream settings reach the provider as they are.
func TestMaxToolCallsAndUpstream(t *testing.T) {
	up := runner.Upstream{ReasoningEffort: "low", PromptCacheKey: "k", SafetyIdentifier: "s", ServiceTier: "flex", User: "u"}
	for _, max := range []int{0, 1, 2} {
		p := &threeCalls{}
		var streamed int
		res, err := agent.New(p).Run(t.Context(), runner.Request{Input: user, Tools: []runner.Tool{{Name: "lookup"}},
			MaxToolCalls: max, Upstream: up, Stream: true}, func(e runner.Event) error {
			if e.ToolCall != nil {
				streamed++
			}
			return nil
		})
		want := max
		if max == 0 {
			want = 3 // no bound
		}
		if err != nil || len(res.ToolCalls) != want || streamed != want {
			t.Errorf("max %d: %d calls, %d streamed, %v", max, len(res.ToolCalls), streamed, err)
		}
		if p.got.Upstream != up {
			t.Errorf("max %d: the provider got upstream %+v", max, p.got.Upstream)
		}
		if single := p.got.ParallelToolCalls != nil && !*p.got.ParallelToolCalls; single != (max == 1) {
			t.Errorf("max %d: parallel_tool_calls %v", max, p.got.ParallelToolCalls)
		}
	}
}
