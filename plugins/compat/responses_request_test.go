package compat

import (
	"strings"
	"testing"
)

// defaultEcho is the echo of a body that sets none of the echoed settings.
const defaultEcho = `{"instructions":null,"metadata":{},"temperature":1,"top_p":1,"max_output_tokens":null,
	"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"parallel_tool_calls":true,"store":true,
	"truncation":"disabled","user":null,"previous_response_id":null,"background":false}`

func TestMapResponsesRequest(t *testing.T) {
	for _, c := range []struct{ name, body, request, echo string }{
		{
			name:    "string input",
			body:    `{"model":"service","input":"Tell me a joke"}`,
			request: `{"input":[{"role":"user","content":"Tell me a joke"}]}`,
			echo:    defaultEcho,
		},
		{
			name: "message list as the Vercel AI SDK sends it",
			body: `{"model":"service","input":[{"role":"system","content":"Be terse."},
				{"role":"user","content":[{"type":"input_text","text":"Hi"}]},
				{"role":"assistant","content":[{"type":"output_text","text":"Hello!"}],"id":"msg_prev"},
				{"role":"user","content":[{"type":"input_text","text":"More, "},{"type":"input_text","text":"please"}]}]}`,
			request: `{"input":[{"role":"system","content":"Be terse."},{"role":"user","content":"Hi"},
				{"role":"assistant","content":"Hello!"},{"role":"user","content":"More, please"}]}`,
			echo: defaultEcho,
		},
		{
			name: "typed message items as LangChain sends them",
			body: `{"model":"service","input":[{"type":"message","role":"developer","content":"Rules"},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"Go"}]}],"stream":false}`,
			request: `{"input":[{"role":"developer","content":"Rules"},{"role":"user","content":"Go"}]}`,
			echo:    defaultEcho,
		},
		{
			name:    "text {} is allowed and echoed with the default format",
			body:    `{"model":"service","input":"x","text":{}}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
			echo:    defaultEcho,
		},
		{
			name:    "text without format keeps its other settings",
			body:    `{"model":"service","input":"x","text":{"verbosity":"low"}}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
			echo: `{"instructions":null,"metadata":{},"temperature":1,"top_p":1,"max_output_tokens":null,
				"text":{"format":{"type":"text"},"verbosity":"low"},"tool_choice":"auto","tools":[],"parallel_tool_calls":true,
				"store":true,"truncation":"disabled","user":null,"previous_response_id":null,"background":false}`,
		},
		{
			name: "json_schema format",
			body: `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"answer","strict":true,
				"schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}}}`,
			request: `{"input":[{"role":"user","content":"x"}],"output_schema":{"type":"object","properties":{"a":{"type":"integer"}},
				"required":["a"],"additionalProperties":false},"schema_name":"answer"}`,
			echo: `{"instructions":null,"metadata":{},"temperature":1,"top_p":1,"max_output_tokens":null,
				"text":{"format":{"type":"json_schema","name":"answer","strict":true,"schema":{"type":"object","properties":{"a":{"type":"integer"}},
				"required":["a"],"additionalProperties":false},"description":""}},"tool_choice":"auto","tools":[],"parallel_tool_calls":true,
				"store":true,"truncation":"disabled","user":null,"previous_response_id":null,"background":false}`,
		},
		{
			name:    "json_object format",
			body:    `{"model":"service","input":"x","text":{"format":{"type":"json_object"}}}`,
			request: `{"input":[{"role":"user","content":"x"}],"json_object":true}`,
			echo: `{"instructions":null,"metadata":{},"temperature":1,"top_p":1,"max_output_tokens":null,
				"text":{"format":{"type":"json_object"}},"tool_choice":"auto","tools":[],"parallel_tool_calls":true,
				"store":true,"truncation":"disabled","user":null,"previous_response_id":null,"background":false}`,
		},
		{
			name: "settings are echoed as sent",
			body: `{"model":"service","input":"x","instructions":"Answer in \"French\".","stream":true,"max_output_tokens":200,
				"metadata":{"k":"v"},"temperature":0.2,"top_p":0.9,"tool_choice":"none","tools":[],"parallel_tool_calls":false,
				"store":false,"truncation":"disabled","user":"user-1","previous_response_id":"resp_prev","reasoning":{"effort":"low"},"include":[],
				"presence_penalty":0.5,"frequency_penalty":-1,"top_logprobs":0,"max_tool_calls":2}`,
			request: `{"input":[{"role":"user","content":"x"}],"instructions":"Answer in \"French\".","stream":true,"max_output_tokens":200,
				"previous_response_id":"resp_prev","no_store":true,"tool_choice":"none","parallel_tool_calls":false,"max_tool_calls":2,
				"upstream":{"reasoning_effort":"low","user":"user-1"}}`,
			echo: `{"instructions":"Answer in \"French\".","metadata":{"k":"v"},"temperature":0.2,"top_p":0.9,"max_output_tokens":200,
				"text":{"format":{"type":"text"}},"tool_choice":"none","tools":[],"parallel_tool_calls":false,"store":false,
				"truncation":"disabled","user":"user-1","previous_response_id":"resp_prev","background":false,
				"presence_penalty":0.5,"frequency_penalty":-1,"top_logprobs":0,"max_tool_calls":2,"reasoning":{"effort":"low","summary":null}}`,
		},
		{
			name: "function tools are echoed with the keys the specification requires; max_tool_calls 0 offers none",
			body: `{"model":"service","input":"x","tools":[{"type":"function","name":"f"},
				{"type":"function","name":"g","description":"G","parameters":{"type":"object"},"strict":true}],"max_tool_calls":0}`,
			request: `{"input":[{"role":"user","content":"x"}],"tools":[{"name":"f"},{"name":"g","description":"G","parameters":{"type":"object"},"strict":true}],
				"tool_choice":"none"}`,
			echo: `{"instructions":null,"metadata":{},"temperature":1,"top_p":1,"max_output_tokens":null,"text":{"format":{"type":"text"}},
				"tool_choice":"auto","tools":[{"type":"function","name":"f","description":null,"parameters":null,"strict":null},
				{"type":"function","name":"g","description":"G","parameters":{"type":"object"},"strict":true}],
				"parallel_tool_calls":true,"store":true,"truncation":"disabled","user":null,"previous_response_id":null,"background":false,
				"max_tool_calls":0}`,
		},
		{
			name: "item_reference and a replayed assistant item, as the Vercel AI SDK sends a second turn",
			body: `{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"Hi"}]},
				{"type":"item_reference","id":"msg_abc"},{"role":"user","content":"again"}],
				"background":true,"previous_response_id":"resp_1","prompt_cache_key":"k","safety_identifier":"s",
				"service_tier":"auto","include":["unknown.value"],"n":1}`,
			request: `{"input":[{"role":"user","content":"Hi"},{"role":"","content":"","ref":"msg_abc","ref_index":1},{"role":"user","content":"again"}],
				"previous_response_id":"resp_1","background":true,"upstream":{"prompt_cache_key":"k","safety_identifier":"s","service_tier":"auto"}}`,
			echo: strings.Replace(strings.Replace(defaultEcho, `"background":false`, `"background":true,"service_tier":"auto","safety_identifier":"s","prompt_cache_key":"k"`, 1),
				`"previous_response_id":null`, `"previous_response_id":"resp_1"`, 1),
		},
		{
			name: "a compaction item and Codex's compaction_trigger pass through for the host to open",
			body: `{"model":"service","input":[{"type":"compaction","id":"cmp_1","encrypted_content":"rc1.k.abc"},
				{"role":"user","content":"go on"},{"type":"compaction_trigger"}]}`,
			request: `{"input":[{"role":"compaction","content":"rc1.k.abc","ref_index":0},{"role":"user","content":"go on"},
				{"role":"compaction_trigger","content":"","ref_index":2}]}`,
			echo: defaultEcho,
		},
		{
			name: "nulls take the defaults",
			body: `{"model":"service","input":"x","instructions":null,"metadata":null,"temperature":null,"top_p":null,"text":null,
				"tool_choice":null,"tools":null,"parallel_tool_calls":null,"store":null,"truncation":null,"user":null,
				"previous_response_id":null,"max_output_tokens":null,"stream":null}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
			echo:    defaultEcho,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			request, echo := mapOK(t, EndpointResponses, c.body)
			if want := compact(t, c.request); request != want {
				t.Errorf("request\n got: %s\nwant: %s", request, want)
			}
			if want := compact(t, c.echo); echo != want {
				t.Errorf("echo\n got: %s\nwant: %s", echo, want)
			}
		})
	}
}

// Fields that change meaning and are not supported are refused by name.
func TestMapResponsesRequestUnsupported(t *testing.T) {
	for _, c := range []struct{ name, body, param string }{
		{"conversation", `{"model":"service","input":"x","conversation":"conv_1"}`, "conversation"},
		{"conversation with previous_response_id", `{"model":"service","input":"x","conversation":{"id":"conv_1"},"previous_response_id":"resp_1"}`, "conversation"},
		{"prompt template", `{"model":"service","input":"x","prompt":{"id":"pmpt_1"}}`, "prompt"},
		{"n above 1", `{"model":"service","input":"x","n":2}`, "n"},
		{"top_logprobs", `{"model":"service","input":"x","top_logprobs":3}`, "top_logprobs"},
		{"truncation auto", `{"model":"service","input":"x","truncation":"auto"}`, "truncation"},
		{"moderation", `{"model":"service","input":"x","moderation":{"model":"omni-moderation-latest"}}`, "moderation"},
		{"prompt_cache_retention", `{"model":"service","input":"x","prompt_cache_retention":"24h"}`, "prompt_cache_retention"},
		{"prompt_cache_options", `{"model":"service","input":"x","prompt_cache_options":{}}`, "prompt_cache_options"},
		{"access_programs", `{"model":"service","input":"x","access_programs":{"cyber":"standard"}}`, "access_programs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapRefused(t, EndpointResponses, c.body)
			if got.Param != c.param || got.Code != CodeUnsupportedParameter {
				t.Errorf("got param %q code %q, want %q unsupported_parameter", got.Param, got.Code, c.param)
			}
		})
	}
}

func TestMapResponsesRequestInvalid(t *testing.T) {
	for _, c := range []struct{ name, body, param string }{
		{"input missing", `{"model":"service"}`, "input"},
		{"input a number", `{"model":"service","input":1}`, "input"},
		{"input empty", `{"model":"service","input":[]}`, "input"},
		{"item not an object", `{"model":"service","input":["hi"]}`, "input[0]"},
		{"item reference without id", `{"model":"service","input":[{"type":"item_reference"}]}`, "input[0].id"},
		{"compaction without encrypted_content", `{"model":"service","input":[{"type":"compaction"}]}`, "input[0].encrypted_content"},
		{"compaction with a numeric encrypted_content", `{"model":"service","input":[{"type":"compaction","encrypted_content":1}]}`, "input[0].encrypted_content"},
		{"item reference with a numeric id", `{"model":"service","input":[{"type":"item_reference","id":7}]}`, "input[0].id"},
		{"item reference with an empty id", `{"model":"service","input":[{"type":"item_reference","id":""}]}`, "input[0].id"},
		{"background without store", `{"model":"service","input":"x","background":true,"store":false}`, "background"},
		{"background a string", `{"model":"service","input":"x","background":"yes"}`, "background"},
		{"previous_response_id empty", `{"model":"service","input":"x","previous_response_id":""}`, "previous_response_id"},
		{"role missing", `{"model":"service","input":[{"content":"x"}]}`, "input[0].role"},
		{"role tool", `{"model":"service","input":[{"role":"tool","content":"x"}]}`, "input[0].role"},
		{"content missing", `{"model":"service","input":[{"role":"user"}]}`, "input[0].content"},
		{"chat-style text part", `{"model":"service","input":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, "input[0].content[0].type"},
		{"instructions a number", `{"model":"service","input":"x","instructions":1}`, "instructions"},
		{"text a string", `{"model":"service","input":"x","text":"plain"}`, "text"},
		{"format a string", `{"model":"service","input":"x","text":{"format":"json"}}`, "text.format"},
		{"format unknown type", `{"model":"service","input":"x","text":{"format":{"type":"xml"}}}`, "text.format.type"},
		{"schema missing", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"s"}}}`, "text.format.schema"},
		{"schema an array", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"s","schema":[]}}}`, "text.format.schema"},
		{"schema name missing", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name"},
		{"max_output_tokens zero", `{"model":"service","input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{"stream a string", `{"model":"service","input":"x","stream":"yes"}`, "stream"},
		{"metadata an array", `{"model":"service","input":"x","metadata":[]}`, "metadata"},
		{"temperature a string", `{"model":"service","input":"x","temperature":"hot"}`, "temperature"},
		{"top_p a string", `{"model":"service","input":"x","top_p":"x"}`, "top_p"},
		{"temperature above 2", `{"model":"service","input":"x","temperature":3}`, "temperature"},
		{"top_p negative", `{"model":"service","input":"x","top_p":-0.5}`, "top_p"},
		{"tools an object", `{"model":"service","input":"x","tools":{}}`, "tools"},
		{"tool_choice a number", `{"model":"service","input":"x","tool_choice":3}`, "tool_choice"},
		{"parallel_tool_calls a string", `{"model":"service","input":"x","parallel_tool_calls":"x"}`, "parallel_tool_calls"},
		{"store a number", `{"model":"service","input":"x","store":1}`, "store"},
		{"truncation unknown", `{"model":"service","input":"x","truncation":"sometimes"}`, "truncation"},
		{"user a number", `{"model":"service","input":"x","user":5}`, "user"},
		{"presence_penalty above 2", `{"model":"service","input":"x","presence_penalty":3}`, "presence_penalty"},
		{"frequency_penalty a string", `{"model":"service","input":"x","frequency_penalty":"x"}`, "frequency_penalty"},
		{"top_logprobs a fraction", `{"model":"service","input":"x","top_logprobs":0.5}`, "top_logprobs"},
		{"max_tool_calls negative", `{"model":"service","input":"x","max_tool_calls":-1}`, "max_tool_calls"},
		{"max_tool_calls 0 with a required call", `{"model":"service","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":"required","max_tool_calls":0}`, "max_tool_calls"},
		{"service_tier a number", `{"model":"service","input":"x","service_tier":1}`, "service_tier"},
		{"prompt_cache_key an object", `{"model":"service","input":"x","prompt_cache_key":{}}`, "prompt_cache_key"},
		{"safety_identifier a number", `{"model":"service","input":"x","safety_identifier":1}`, "safety_identifier"},
		{"reasoning a string", `{"model":"service","input":"x","reasoning":"high"}`, "reasoning"},
		{"reasoning effort unknown", `{"model":"service","input":"x","reasoning":{"effort":"max"}}`, "reasoning.effort"},
		{"reasoning summary unknown", `{"model":"service","input":"x","reasoning":{"summary":"long"}}`, "reasoning.summary"},
		{"previous_response_id a number", `{"model":"service","input":"x","previous_response_id":5}`, "previous_response_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mapInvalid(t, EndpointResponses, c.body); got.Param != c.param {
				t.Errorf("param: got %q, want %q (message %q)", got.Param, c.param, got.Message)
			}
		})
	}
}
