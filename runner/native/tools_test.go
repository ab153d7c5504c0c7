package native

import (
	"encoding/json"
	"testing"
)

// The tool fields' JSON form is part of the plugin ABI: pinned here.
func TestToolWireForm(t *testing.T) {
	no := false
	req := Request{
		Input: []Message{
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}},
			{Role: "tool", Content: "42", ToolCallID: "call_1"},
		},
		Tools:             []Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}, {Name: "g"}},
		ToolChoice:        ToolChoice{Mode: ToolChoiceFunction, Name: "f"},
		ParallelToolCalls: &no,
	}
	res := Result{FinishReason: "tool_calls", ToolCalls: []ToolCall{{ID: "call_2", Name: "g", Arguments: "{}"}}}
	for _, c := range []struct {
		v    any
		want string
	}{
		{req, `{"input":[{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"f","arguments":"{\"a\":1}"}]},` +
			`{"role":"tool","content":"42","tool_call_id":"call_1"}],"stream":false,` +
			`"tools":[{"name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"name":"g"}],` +
			`"tool_choice":{"name":"f"},"parallel_tool_calls":false}`},
		{Request{ToolChoice: ToolChoice{Mode: ToolChoiceRequired}}, `{"input":null,"stream":false,"tool_choice":"required"}`},
		{res, `{"text":"","finish_reason":"tool_calls","tool_calls":[{"id":"call_2","name":"g","arguments":"{}"}],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`},
		{ToolCallDelta{Index: 1, ID: "c", Name: "g"}, `{"index":1,"id":"c","name":"g"}`},
		{ToolCallDelta{Arguments: `{"a`}, `{"index":0,"arguments":"{\"a"}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.v, b, c.want)
		}
		if r, ok := c.v.(Request); ok {
			var back Request
			if err := json.Unmarshal(b, &back); err != nil || back.ToolChoice != r.ToolChoice {
				t.Errorf("round trip of %s: %+v, %v", b, back.ToolChoice, err)
			}
		}
	}
	for _, bad := range []string{`"sometimes"`, `{}`, `3`, `{"name":""}`} {
		var c ToolChoice
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("tool_choice %s accepted as %+v", bad, c)
		}
	}
}
