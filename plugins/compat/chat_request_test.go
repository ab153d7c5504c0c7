package compat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMapChatRequest(t *testing.T) {
	for _, c := range []struct {
		name, body, request string
		includeUsage        bool
	}{
		{
			name:    "string content",
			body:    `{"model":"service","messages":[{"role":"user","content":"Hello"}]}`,
			request: `{"input":[{"role":"user","content":"Hello"}]}`,
		},
		{
			name: "every role; tool results carry their call id",
			body: `{"model":"service","messages":[{"role":"system","content":"S"},{"role":"developer","content":"D"},
				{"role":"user","content":"U"},{"role":"assistant","content":"A","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"T"}]}`,
			request: `{"input":[{"role":"system","content":"S"},{"role":"developer","content":"D"},{"role":"user","content":"U"},
				{"role":"assistant","content":"A","tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},{"role":"tool","content":"T","tool_call_id":"c1"}]}`,
		},
		{
			name:    "text parts are concatenated (LangChain, Vercel AI SDK)",
			body:    `{"model":"service","messages":[{"role":"user","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}]}]}`,
			request: `{"input":[{"role":"user","content":"Hello, world"}]}`,
		},
		{
			name:    "escapes survive as sent",
			body:    `{"model":"service","messages":[{"role":"user","content":"a\nb \"q\" \u00e9 \\ /"}]}`,
			request: `{"input":[{"role":"user","content":"a\nb \"q\" \u00e9 \\ /"}]}`,
		},
		{
			name: "assistant turn that only called tools keeps its calls",
			body: `{"model":"service","messages":[{"role":"user","content":"Q"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"42"}]}`,
			request: `{"input":[{"role":"user","content":"Q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},
				{"role":"tool","content":"42","tool_call_id":"c1"}]}`,
		},
		{
			name:         "stream with usage",
			body:         `{"model":"service","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`,
			request:      `{"input":[{"role":"user","content":"x"}],"stream":true}`,
			includeUsage: true,
		},
		{
			name:    "stream false with stream_options is accepted",
			body:    `{"model":"service","messages":[{"role":"user","content":"x"}],"stream":false,"stream_options":{"include_usage":true}}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
		},
		{
			name:    "stream without usage",
			body:    `{"model":"service","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":null}`,
			request: `{"input":[{"role":"user","content":"x"}],"stream":true}`,
		},
		{
			name:    "response_format text",
			body:    `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
		},
		{
			name:    "response_format json_object",
			body:    `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
			request: `{"input":[{"role":"user","content":"x"}],"json_object":true}`,
		},
		{
			name: "response_format json_schema",
			body: `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",
				"json_schema":{"name":"city-info_2","strict":true,"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}`,
			request: `{"input":[{"role":"user","content":"x"}],"output_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"schema_name":"city-info_2"}`,
		},
		{
			name:    "max_tokens",
			body:    `{"model":"service","messages":[{"role":"user","content":"x"}],"max_tokens":64}`,
			request: `{"input":[{"role":"user","content":"x"}],"max_output_tokens":64}`,
		},
		{
			name:    "max_completion_tokens wins over max_tokens",
			body:    `{"model":"service","max_completion_tokens":32,"messages":[{"role":"user","content":"x"}],"max_tokens":64}`,
			request: `{"input":[{"role":"user","content":"x"}],"max_output_tokens":32}`,
		},
		{
			name: "pretty-printed body, escaped keys, nested unknown fields",
			body: "{\n  \"model\" : \"service\",\n  \"tools\" : [ { \"type\": \"function\", \"function\": { \"name\": \"f\", \"parameters\": {\"messages\": []} } } ],\n" +
				"  \"mess\\u0061ges\" : [\n    { \"content\" : [ { \"text\" : \"a\\\\\", \"type\" : \"text\" } ] , \"role\" : \"user\" }\n  ]\r\n}",
			request: `{"input":[{"role":"user","content":"a\\"}],"tools":[{"name":"f","parameters":{"messages":[]}}]}`,
		},
		{
			name: "n 1, nulls and unknown fields",
			body: `{"model":"service","messages":[{"role":"user","content":"x","name":"ada"}],"n":1,"temperature":0.3,"user":"u",
				"max_tokens":null,"response_format":null,"stream":null,"seed":4,"logit_bias":{},"metadata":{"a":"b"}}`,
			request: `{"input":[{"role":"user","content":"x"}]}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			request, echo := mapOK(t, EndpointChat, c.body)
			if want := compact(t, c.request); request != want {
				t.Errorf("request\n got: %s\nwant: %s", request, want)
			}
			wantEcho := `{"include_usage":false}`
			if c.includeUsage {
				wantEcho = `{"include_usage":true}`
			}
			if echo != wantEcho {
				t.Errorf("echo: got %s, want %s", echo, wantEcho)
			}
		})
	}
}

// Bytes that are not valid JSON text (raw control characters, invalid
// UTF-8) must not reach the native request: it has to stay valid JSON.
func TestMapChatRequestRepairsText(t *testing.T) {
	body := "{\"model\":\"service\",\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}"
	request, _ := mapOK(t, EndpointChat, body)
	var got struct{ Input []struct{ Content string } }
	if err := json.Unmarshal([]byte(request), &got); err != nil {
		t.Fatal(err)
	}
	if got.Input[0].Content != "bad \uFFFD byte" || strings.ContainsRune(request, 0xff) {
		t.Errorf("got %q from %s", got.Input[0].Content, request)
	}
}

func TestMapChatRequestInvalid(t *testing.T) {
	const msg = `"messages":[{"role":"user","content":"x"}]`
	for _, c := range []struct{ name, body, param string }{
		{"body not an object", `["x"]`, ""},
		{"messages missing", `{"model":"service"}`, "messages"},
		{"messages not an array", `{"model":"service","messages":"hi"}`, "messages"},
		{"messages empty", `{"model":"service","messages":[]}`, "messages"},
		{"only a tool-calling assistant turn", `{"model":"service","messages":[{"role":"assistant","content":null}]}`, "messages"},
		{"message not an object", `{"model":"service","messages":["hi"]}`, "messages[0]"},
		{"role missing", `{"model":"service","messages":[{"content":"x"}]}`, "messages[0].role"},
		{"role unknown", `{"model":"service","messages":[{"role":"user","content":"x"},{"role":"function","content":"x"}]}`, "messages[1].role"},
		{"role not a string", `{"model":"service","messages":[{"role":1,"content":"x"}]}`, "messages[0].role"},
		{"content missing", `{"model":"service","messages":[{"role":"user"}]}`, "messages[0].content"},
		{"content a number", `{"model":"service","messages":[{"role":"user","content":3}]}`, "messages[0].content"},
		{"tool result answering no call", `{"model":"service","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "messages[1].tool_call_id"},
		{"tool result answering another call", `{"model":"service","messages":[{"role":"user","content":"x"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c2","content":"r"}]}`, "messages[2].tool_call_id"},
		{"tool result before its call", `{"model":"service","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[1].tool_call_id"},
		{"content null for user", `{"model":"service","messages":[{"role":"user","content":null}]}`, "messages[0].content"},
		{"part without type", `{"model":"service","messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0].type"},
		{"part not an object", `{"model":"service","messages":[{"role":"user","content":["x"]}]}`, "messages[0].content[0]"},
		{"text part without text", `{"model":"service","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text"},
		{"response_format not an object", `{"model":"service",` + msg + `,"response_format":"json"}`, "response_format"},
		{"response_format without type", `{"model":"service",` + msg + `,"response_format":{}}`, "response_format.type"},
		{"response_format unknown type", `{"model":"service",` + msg + `,"response_format":{"type":"xml"}}`, "response_format.type"},
		{"json_schema missing", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
		{"schema missing", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"s"}}}`, "response_format.json_schema.schema"},
		{"schema not an object", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":"x"}}}`, "response_format.json_schema.schema"},
		{"schema name missing", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, "response_format.json_schema.name"},
		{"schema name with spaces", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"my schema","schema":{}}}}`, "response_format.json_schema.name"},
		{"schema name too long", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"` + strings.Repeat("n", 65) + `","schema":{}}}}`, "response_format.json_schema.name"},
		{"strict not a boolean", `{"model":"service",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{},"strict":"yes"}}}`, "response_format.json_schema.strict"},
		{"stream a string", `{"model":"service",` + msg + `,"stream":"true"}`, "stream"},
		{"stream_options not an object", `{"model":"service",` + msg + `,"stream":true,"stream_options":true}`, "stream_options"},
		{"include_usage not a boolean", `{"model":"service",` + msg + `,"stream":true,"stream_options":{"include_usage":1}}`, "stream_options.include_usage"},
		{"max_tokens zero", `{"model":"service",` + msg + `,"max_tokens":0}`, "max_tokens"},
		{"max_tokens fractional", `{"model":"service",` + msg + `,"max_tokens":1.5}`, "max_tokens"},
		{"max_tokens a string", `{"model":"service",` + msg + `,"max_tokens":"10"}`, "max_tokens"},
		{"max_completion_tokens negative", `{"model":"service",` + msg + `,"max_completion_tokens":-1}`, "max_completion_tokens"},
		{"n 2", `{"model":"service",` + msg + `,"n":2}`, "n"},
		{"n a string", `{"model":"service",` + msg + `,"n":"1"}`, "n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mapInvalid(t, EndpointChat, c.body); got.Param != c.param {
				t.Errorf("param: got %q, want %q (message %q)", got.Param, c.param, got.Message)
			}
		})
	}
}

// A tool result's call id matches the call's whatever escapes either uses.
func TestAnswersMatchesDecodedIDs(t *testing.T) {
	calls := []value{`"c0"`, `"c\u0031"`}
	for id, want := range map[value]bool{`"c1"`: true, `"\u00631"`: true, `"c0"`: true, `"c2"`: false, `""`: false} {
		if got := answers(calls, id); got != want {
			t.Errorf("answers(%s) = %v, want %v", id, got, want)
		}
	}
}
