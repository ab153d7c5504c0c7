package nativereq

import (
	"errors"
	"testing"

	"github.com/runedge/runedge/filters/apierr"
)

func TestParse(t *testing.T) {
	p, err := Parse([]byte(`{"input":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"42"}],"instructions":"be brief","output_schema":{"type":"object"},` +
		`"tools":[{"name":"f","parameters":{"type":"object"},"strict":true}],"tool_choice":{"name":"f"},` +
		`"parallel_tool_calls":false,"max_output_tokens":9,"stream":true,"session_id":"sess_1","thread_id":null}`))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Request
	if len(r.Input) != 3 || r.Input[1].ToolCalls[0].Name != "f" || r.Input[2].ToolCallID != "c1" ||
		r.Instructions != "be brief" || string(r.OutputSchema) != `{"type":"object"}` || !r.Tools[0].Strict ||
		r.ToolChoice.Name != "f" || *r.ParallelToolCalls || r.MaxOutputTokens != 9 || !r.Stream ||
		p.SessionID != "sess_1" || p.ThreadID != "" {
		t.Fatalf("%+v", p)
	}
}

func TestParseRefuses(t *testing.T) {
	for body, param := range map[string]string{
		`{"input":[{"role":"user","content":"a"}],"model":"service"}`:            "model",
		`{"input":[{"role":"assistant","content":"a","tool_call_id":"x"}]}`:      "input[0].tool_call_id",
		`{"input":[{"role":"user","tool_calls":[{"id":"c","name":"f"}]}]}`:       "input[0].tool_calls",
		`{"input":[{"role":"user","content":"a"}],"tools":[{"name":"f","x":1}]}`: "tools[0].x",
		`{"input":[{"role":"user","content":"a"}],"max_output_tokens":"9"}`:      "max_output_tokens",
	} {
		_, err := Parse([]byte(body))
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Code != apierr.CodeInvalidBody || e.Param != param {
			t.Errorf("%s: %v (param %q), want 400 invalid_body naming %q", body, err, paramOf(e), param)
		}
	}
}

func paramOf(e *apierr.Error) string {
	if e == nil {
		return ""
	}
	return e.Param
}
