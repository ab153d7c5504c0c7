package compat

import "testing"

const weatherParams = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`

func TestMapToolsRequest(t *testing.T) {
	for _, c := range []struct {
		name, endpoint, body, request string
	}{
		{
			name:     "chat: tools, named choice, parallel, a full tool turn",
			endpoint: EndpointChat,
			body: `{"model":"service","tools":[{"type":"function","function":{"name":"get_weather","description":"Weather \"now\"","parameters":` + weatherParams + `,"strict":true}},
				{"type":"function","function":{"name":"noop"}}],"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false,
				"messages":[{"role":"user","content":"weather?"},
				{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
				{"id":"call_2","type":"function","function":{"name":"noop","arguments":""}}]},
				{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"sunny"}]},{"role":"tool","tool_call_id":"call_2","content":"done"}]}`,
			request: `{"input":[{"role":"user","content":"weather?"},
				{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"id":"call_2","name":"noop","arguments":""}]},
				{"role":"tool","content":"sunny","tool_call_id":"call_1"},{"role":"tool","content":"done","tool_call_id":"call_2"}],
				"tools":[{"name":"get_weather","description":"Weather \"now\"","parameters":` + weatherParams + `,"strict":true},{"name":"noop"}],
				"tool_choice":{"name":"get_weather"},"parallel_tool_calls":false}`,
		},
		{
			name:     "chat: required, empty tool_calls is no call",
			endpoint: EndpointChat,
			body: `{"model":"service","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required",
				"messages":[{"role":"assistant","content":"hi","tool_calls":[]},{"role":"user","content":"x"}]}`,
			request: `{"input":[{"role":"assistant","content":"hi"},{"role":"user","content":"x"}],"tools":[{"name":"f"}],"tool_choice":"required"}`,
		},
		{
			name:     "responses: function tools, calls grouped, outputs paired by call_id",
			endpoint: EndpointResponses,
			body: `{"model":"service","tools":[{"type":"function","name":"get_weather","parameters":` + weatherParams + `,"strict":true,"description":null}],
				"tool_choice":{"type":"function","name":"get_weather"},
				"input":[{"role":"user","content":"weather in Paris and Rome?"},
				{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
				{"type":"function_call","id":"fc_2","call_id":"call_2","name":"get_weather","arguments":"{\"city\":\"Rome\"}","status":"completed"},
				{"type":"function_call_output","call_id":"call_1","output":"sunny"},
				{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"rain"}]}]}`,
			request: `{"input":[{"role":"user","content":"weather in Paris and Rome?"},
				{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"id":"call_2","name":"get_weather","arguments":"{\"city\":\"Rome\"}"}]},
				{"role":"tool","content":"sunny","tool_call_id":"call_1"},{"role":"tool","content":"rain","tool_call_id":"call_2"}],
				"tools":[{"name":"get_weather","parameters":` + weatherParams + `,"strict":true}],"tool_choice":{"name":"get_weather"}}`,
		},
		{
			name:     "responses: a call as the first and last item",
			endpoint: EndpointResponses,
			body:     `{"model":"service","tools":[{"type":"function","name":"f"}],"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
			request:  `{"input":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":"{}"}]}],"tools":[{"name":"f"}]}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := mapOK(t, c.endpoint, c.body)
			if want := compact(t, c.request); req != want {
				t.Errorf("request\n got: %s\nwant: %s", req, want)
			}
		})
	}
}

func TestMapToolsRequestInvalid(t *testing.T) {
	for _, c := range []struct{ name, endpoint, body, param, code string }{
		{"chat built-in tool", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"web_search"}]}`, "tools[1].type", CodeUnsupportedParameter},
		{"chat custom tool", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"f"}}]}`, "tools[0].type", CodeUnsupportedParameter},
		{"chat function missing", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`, "tools[0].function", CodeInvalidBody},
		{"chat bad name", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools[0].function.name", CodeInvalidBody},
		{"chat parameters not an object", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`, "tools[0].function.parameters", CodeInvalidBody},
		{"chat choice not offered", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, "tool_choice.function.name", CodeInvalidBody},
		{"chat required without tools", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`, "tool_choice", CodeInvalidBody},
		{"chat allowed_tools choice", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{}}}`, "tool_choice", CodeUnsupportedParameter},
		{"chat functions", EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}],"functions":[{"name":"f"}]}`, "functions", CodeUnsupportedParameter},
		{"chat tool message without id", EndpointChat, `{"model":"service","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", CodeInvalidBody},
		{"chat call arguments not a string", EndpointChat, `{"model":"service","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}]}`, "messages[0].tool_calls[0].function.arguments", CodeInvalidBody},
		{"responses tool type not a string", EndpointResponses, `{"model":"service","input":"x","tools":[{"type":1}]}`, "tools[0].type", CodeInvalidBody},
		{"responses choice not offered", EndpointResponses, `{"model":"service","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "tool_choice.name", CodeInvalidBody},
		{"responses built-in choice", EndpointResponses, `{"model":"service","input":"x","tool_choice":{"type":"web_search_preview"}}`, "tool_choice", CodeUnsupportedParameter},
		{"responses call without call_id", EndpointResponses, `{"model":"service","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", CodeInvalidBody},
		{"responses output without call_id", EndpointResponses, `{"model":"service","input":[{"type":"function_call_output","output":"1"}]}`, "input[0].call_id", CodeInvalidBody},
		{"responses output a number", EndpointResponses, `{"model":"service","input":[{"type":"function_call_output","call_id":"c","output":1}]}`, "input[0].output", CodeInvalidBody},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapInvalid(t, c.endpoint, c.body)
			if got.Param != c.param || got.Code != c.code {
				t.Errorf("got param %q code %q, want %q %q (message %q)", got.Param, got.Code, c.param, c.code, got.Message)
			}
		})
	}
}
