package compat

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/abi"
	nativerun "github.com/runedge/runedge/runner/native"
)

// Codex's first request carries function tools, a namespace and a hosted
// web_search: the namespace's functions are offered, web_search withheld.
func TestMapToolKindsRequest(t *testing.T) {
	for _, c := range []struct{ name, body, request string }{
		{
			name: "namespace, custom with grammar, hosted withheld",
			body: `{"model":"service","input":"x","tools":[{"type":"function","name":"shell","parameters":{"type":"object"}},
				{"type":"namespace","name":"multi_agent_v1","description":"Sub \"agents\"","tools":[{"type":"function","name":"spawn_agent","description":"Spawn."},{"type":"custom","name":"note"}]},
				{"type":"web_search","external_web_access":false},
				{"type":"custom","name":"apply_patch","description":"Patch.","format":{"type":"grammar","syntax":"lark","definition":"start: \"*\""}},
				{"type":"mcp","server_label":"s"}],"tool_choice":{"type":"custom","name":"apply_patch"}}`,
			request: `{"input":[{"role":"user","content":"x"}],"tools":[{"name":"shell","parameters":{"type":"object"}},
				{"name":"spawn_agent","description":"multi_agent_v1: Sub \"agents\"\n\nSpawn.","namespace":"multi_agent_v1"},
				{"name":"note","description":"multi_agent_v1: Sub \"agents\"\n\n","parameters":{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false},"custom":true,"namespace":"multi_agent_v1"},
				{"name":"apply_patch","description":"Patch.","parameters":{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input. It must match this lark grammar:\nstart: \"*\""}},"required":["input"],"additionalProperties":false},"custom":true}],
				"tool_choice":{"name":"apply_patch"},"withheld_tools":[{"index":2,"type":"web_search"},{"index":4,"type":"mcp"}]}`,
		},
		{
			name: "a custom call and its output replayed",
			body: `{"model":"service","tools":[{"type":"custom","name":"apply_patch"}],"input":[{"role":"user","content":"x"},
				{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"a \"b\""},{"type":"custom_tool_call_output","call_id":"c1","output":"done"}]}`,
			request: `{"input":[{"role":"user","content":"x"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"apply_patch","arguments":"a \"b\"","custom":true}]},
				{"role":"tool","content":"done","tool_call_id":"c1"}],
				"tools":[{"name":"apply_patch","parameters":{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false},"custom":true}]}`,
		},
		{
			name: "a namespaced function named like a top-level one is qualified, one named like no other is not",
			body: `{"model":"service","input":"x","tools":[{"type":"function","name":"f"},
				{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"},{"type":"custom","name":"g"}]},
				{"type":"namespace","name":"m","tools":[{"type":"custom","name":"g"},{"type":"function","name":"h"}]}]}`,
			request: `{"input":[{"role":"user","content":"x"}],"tools":[{"name":"f"},
				{"name":"n__f","description":"n: \n\n","qualified":true,"namespace":"n"},
				{"name":"n__g","description":"n: \n\n","parameters":{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false},"custom":true,"qualified":true,"namespace":"n"},
				{"name":"m__g","description":"m: \n\n","parameters":{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false},"custom":true,"qualified":true,"namespace":"m"},
				{"name":"h","description":"m: \n\n","namespace":"m"}]}`,
		},
		{
			name: "a replayed call of a qualified namespaced function takes its qualified name",
			body: `{"model":"service","tools":[{"type":"function","name":"f"},{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]}],
				"input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c1","namespace":"n","name":"f","arguments":"{}"},
				{"type":"function_call","call_id":"c2","name":"f","arguments":"{}"}]}`,
			request: `{"input":[{"role":"user","content":"x"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"n__f","arguments":"{}"},{"id":"c2","name":"f","arguments":"{}"}]}],
				"tools":[{"name":"f"},{"name":"n__f","description":"n: \n\n","qualified":true,"namespace":"n"}]}`,
		},
		{
			name:    "only hosted tools: no tools offered",
			body:    `{"model":"service","input":"x","tools":[{"type":"file_search","vector_store_ids":[]}]}`,
			request: `{"input":[{"role":"user","content":"x"}],"withheld_tools":[{"index":0,"type":"file_search"}]}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, echo := mapOK(t, EndpointResponses, c.body)
			if want := compact(t, c.request); req != want {
				t.Errorf("request\n got: %s\nwant: %s", req, want)
			}
			// The Response echoes tools as sent, hosted ones included.
			if !strings.Contains(echo, `"tools":[{"type":`) {
				t.Errorf("echo lacks the tools as sent: %s", echo)
			}
		})
	}
}

func TestMapToolKindsInvalid(t *testing.T) {
	for _, c := range []struct{ name, body, param, code string }{
		{"forced hosted tool", `{"model":"service","input":"x","tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"}}`, "tool_choice", CodeUnsupportedParameter},
		{"forced hosted tool not offered", `{"model":"service","input":"x","tool_choice":{"type":"code_interpreter"}}`, "tool_choice", CodeUnsupportedParameter},
		{"namespace without tools", `{"model":"service","input":"x","tools":[{"type":"namespace","name":"n","description":"d","tools":[]}]}`, "tools[0].tools", CodeInvalidBody},
		{"namespace bad name", `{"model":"service","input":"x","tools":[{"type":"namespace","name":"a b","tools":[{"type":"function","name":"f"}]}]}`, "tools[0].name", CodeInvalidBody},
		{"namespace hosted inside", `{"model":"service","input":"x","tools":[{"type":"namespace","name":"n","tools":[{"type":"web_search"}]}]}`, "tools[0].tools[0].type", CodeUnsupportedParameter},
		{"duplicate inside a namespace", `{"model":"service","input":"x","tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"},{"type":"custom","name":"f"}]}]}`, "tools[0].tools[1].name", CodeInvalidBody},
		{"duplicate at the top level", `{"model":"service","input":"x","tools":[{"type":"function","name":"f"},{"type":"custom","name":"f"}]}`, "tools[1].name", CodeInvalidBody},
		{"qualified name too long", `{"model":"service","input":"x","tools":[{"type":"function","name":"` + strings.Repeat("f", 40) + `"},{"type":"namespace","name":"` + strings.Repeat("n", 30) + `","tools":[{"type":"function","name":"` + strings.Repeat("f", 40) + `"}]}]}`, "tools[1].tools[0].name", CodeInvalidBody},
		{"custom bad format", `{"model":"service","input":"x","tools":[{"type":"custom","name":"c","format":{"type":"grammar","syntax":"ebnf","definition":"x"}}]}`, "tools[0].format.syntax", CodeInvalidBody},
		{"custom choice not offered", `{"model":"service","input":"x","tools":[{"type":"custom","name":"c"}],"tool_choice":{"type":"custom","name":"d"}}`, "tool_choice.name", CodeInvalidBody},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapInvalid(t, EndpointResponses, c.body)
			if got.Param != c.param || got.Code != c.code {
				t.Errorf("got param %q code %q, want %q %q (message %q)", got.Param, got.Code, c.param, c.code, got.Message)
			}
		})
	}
}

// A call of a namespaced function comes back with its namespace, a call of
// a custom tool as a custom_tool_call with the input string.
func TestMapToolKindsResult(t *testing.T) {
	_, echo := mapOK(t, EndpointResponses, `{"model":"service","input":"x","tools":[{"type":"web_search"},
		{"type":"namespace","name":"multi_agent_v1","description":"d","tools":[{"type":"function","name":"spawn_agent"}]},
		{"type":"custom","name":"apply_patch"},{"type":"function","name":"shell"}]}`)
	in := abi.ResultInput{Endpoint: EndpointResponses, ID: "resp_1", MessageID: "msg_1", Model: "service", Status: "completed",
		Result: nativerun.Result{FinishReason: "tool_calls", ToolCalls: []nativerun.ToolCall{
			{ID: "call_a", Name: "spawn_agent", Arguments: `{"task":"t"}`},
			{ID: "call_b", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n"}`},
			{ID: "call_c", Name: "shell", Arguments: `{}`},
			{ID: "call_d", Name: "apply_patch", Arguments: `not json`},
		}},
		Echo: []byte(echo)}
	out, err := MapResult(in.AppendJSON(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"id":"fc_1_0","type":"function_call","status":"completed","call_id":"call_a","namespace":"multi_agent_v1","name":"spawn_agent","arguments":"{\"task\":\"t\"}"}`,
		`{"id":"fc_1_1","type":"custom_tool_call","status":"completed","call_id":"call_b","name":"apply_patch","input":"*** Begin Patch\n"}`,
		`{"id":"fc_1_2","type":"function_call","status":"completed","call_id":"call_c","name":"shell","arguments":"{}"}`,
		`{"id":"fc_1_3","type":"custom_tool_call","status":"completed","call_id":"call_d","name":"apply_patch","input":"not json"}`,
		`"tools":[{"type":"web_search"},{"type":"namespace"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("reply lacks %s\n%s", want, out)
		}
	}
}
