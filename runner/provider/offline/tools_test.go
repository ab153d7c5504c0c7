package offline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/schema"
)

const weatherParams = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["city","days"],"additionalProperties":false}`

var tools = []runner.Tool{
	{Name: "get_weather", Parameters: json.RawMessage(weatherParams)},
	{Name: "get_time"},
}

// calls runs one request and gathers the tool-call fragments.
func calls(t *testing.T, req runner.ProviderRequest) ([]runner.ToolCallDelta, runner.Result) {
	t.Helper()
	var frags []runner.ToolCallDelta
	res, err := offline.New(offline.Config{}).Generate(t.Context(), req, func(ev runner.Event) error {
		if ev.ToolCall != nil {
			frags = append(frags, *ev.ToolCall)
		} else if ev.Delta == "" {
			t.Error("an event with neither text nor a call")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return frags, res
}

func TestNamedToolIsCalledWithSchemaArguments(t *testing.T) {
	req := runner.ProviderRequest{Messages: userSays("please get_weather Paris"), Tools: tools}
	frags, res := calls(t, req)
	if res.FinishReason != "tool_calls" || len(res.ToolCalls) != 1 || res.Text != "" {
		t.Fatalf("result %+v", res)
	}
	c := res.ToolCalls[0]
	if c.Name != "get_weather" || !strings.HasPrefix(c.ID, "call_") {
		t.Fatalf("call %+v", c)
	}
	s, err := schema.Compile(json.RawMessage(weatherParams))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(c.Arguments)); err != nil || !strings.Contains(c.Arguments, `"city":"Paris"`) {
		t.Fatalf("arguments %s: %v", c.Arguments, err)
	}
	// Fragments: id and name first, then the arguments in pieces.
	var args strings.Builder
	for i, f := range frags {
		if f.Index != 0 || (i == 0) != (f.ID != "") || (i == 0) != (f.Name != "") {
			t.Fatalf("fragment %d %+v", i, f)
		}
		args.WriteString(f.Arguments)
	}
	if len(frags) < 3 || args.String() != c.Arguments || res.Usage.OutputTokens != len(frags) {
		t.Fatalf("%d fragments rebuild %q, usage %+v", len(frags), args.String(), res.Usage)
	}
	// Deterministic.
	_, again := calls(t, req)
	if again.ToolCalls[0] != c {
		t.Fatalf("second call %+v differs from %+v", again.ToolCalls[0], c)
	}
}

func TestToolRule(t *testing.T) {
	no := false
	for _, c := range []struct {
		name  string
		req   runner.ProviderRequest
		calls []string
	}{
		{"not named", runner.ProviderRequest{Messages: userSays("hello"), Tools: tools}, nil},
		{"two named", runner.ProviderRequest{Messages: userSays("get_time and get_weather"), Tools: tools}, []string{"get_weather", "get_time"}},
		{"not parallel", runner.ProviderRequest{Messages: userSays("get_time and get_weather"), Tools: tools, ParallelToolCalls: &no}, []string{"get_weather"}},
		{"none", runner.ProviderRequest{Messages: userSays("get_weather"), Tools: tools, ToolChoice: runner.ToolChoice{Mode: "none"}}, nil},
		{"required", runner.ProviderRequest{Messages: userSays("hello"), Tools: tools, ToolChoice: runner.ToolChoice{Mode: "required"}}, []string{"get_weather"}},
		{"function", runner.ProviderRequest{Messages: userSays("get_weather"), Tools: tools, ToolChoice: runner.ToolChoice{Mode: "function", Name: "get_time"}}, []string{"get_time"}},
		{"no tools", runner.ProviderRequest{Messages: userSays("get_weather")}, nil},
	} {
		_, res := calls(t, c.req)
		var names []string
		for _, tc := range res.ToolCalls {
			names = append(names, tc.Name)
		}
		if strings.Join(names, ",") != strings.Join(c.calls, ",") {
			t.Errorf("%s: called %v, want %v (result %+v)", c.name, names, c.calls, res)
		}
		if (len(c.calls) > 0) != (res.FinishReason == "tool_calls") {
			t.Errorf("%s: finish reason %q", c.name, res.FinishReason)
		}
		if len(c.calls) == 0 && !strings.HasPrefix(res.Text, "You said:") {
			t.Errorf("%s: text %q", c.name, res.Text)
		}
	}
}

func TestToolResultIsQuoted(t *testing.T) {
	msgs := append(userSays("get_weather Paris"),
		runner.Message{Role: "assistant", ToolCalls: []runner.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{}`}}},
		runner.Message{Role: "tool", ToolCallID: "call_1", Content: `{"temp": 21}`})
	_, res := calls(t, runner.ProviderRequest{Messages: msgs, Tools: tools})
	if res.FinishReason != "stop" || res.Text != `get_weather returned: {"temp": 21}` {
		t.Fatalf("result %+v", res)
	}
	// Structured output after the results: a document seeded with them.
	_, res = calls(t, runner.ProviderRequest{Messages: msgs, Tools: tools,
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)})
	if res.Text != `{"summary":"get_weather returned: {\"temp\": 21}"}` {
		t.Fatalf("structured answer %s", res.Text)
	}
}
