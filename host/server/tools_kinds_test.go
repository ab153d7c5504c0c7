package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// Tools as Codex sends them: a namespace of functions, a custom tool and a
// hosted web_search, which the agent cannot run.
const kindsTools = `"tools":[{"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[` +
	`{"type":"function","name":"spawn_agent","parameters":{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}}]},` +
	`{"type":"custom","name":"apply_patch","description":"Patch files."},` +
	`{"type":"web_search","external_web_access":false}]`

// Raw HTTP: a namespaced call comes back with its namespace, a custom call
// as a custom_tool_call; their results go back in the next turn (through
// previous_response_id, and by replaying the call as Codex does with
// store:false). web_search is withheld, echoed, recorded and counted.
func TestNamespaceAndCustomToolsRawHTTP(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"spawn_agent review",`+kindsTools+`}`)
	b := body(t, res)
	call := gjson.GetBytes(b, "output.0")
	if res.StatusCode != 200 || call.Get("type").Str != "function_call" || call.Get("namespace").Str != "multi_agent_v1" ||
		call.Get("name").Str != "spawn_agent" || call.Get("arguments").Str != `{"task":"review"}` {
		t.Fatalf("first turn: %d %s", res.StatusCode, b)
	}
	if got := gjson.GetBytes(b, "tools.#").Int(); got != 3 || gjson.GetBytes(b, "tools.2.type").Str != "web_search" {
		t.Fatalf("tools not echoed as sent: %s", gjson.GetBytes(b, "tools").Raw)
	}
	runID := gjson.GetBytes(b, "metadata.service.run_id").Str
	rec, err := h.srv.runs.Get(context.Background(), runner.Scope{Admin: true}, runID)
	if err != nil {
		t.Fatal(err)
	}
	var stored runner.Request
	if err := json.Unmarshal(rec.Request, &stored); err != nil || len(stored.WithheldTools) != 1 ||
		stored.WithheldTools[0].Type != "web_search" || stored.WithheldTools[0].Index != 2 {
		t.Fatalf("request record %s (%v)", rec.Request, err)
	}
	if v, _ := sample(t, h.scrape(tokAdmin), "runedge_tools_withheld_total", "type=web_search"); v != 1 {
		t.Fatalf("runedge_tools_withheld_total{type=web_search} = %v", v)
	}

	res = h.do("POST", "/v1/responses", `{"model":"service","previous_response_id":"`+gjson.GetBytes(b, "id").Str+`",`+
		`"input":[{"type":"function_call_output","call_id":"`+call.Get("call_id").Str+`","output":"spawned"}],`+kindsTools+`}`)
	b = body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "spawn_agent returned: spawned" {
		t.Fatalf("namespaced result: %d %s", res.StatusCode, b)
	}

	res = h.do("POST", "/v1/responses", `{"model":"service","store":false,"input":"apply_patch fix it",`+kindsTools+`}`)
	b = body(t, res)
	call = gjson.GetBytes(b, "output.0")
	if res.StatusCode != 200 || call.Get("type").Str != "custom_tool_call" || call.Get("name").Str != "apply_patch" ||
		call.Get("input").Str != "fix it" || call.Get("call_id").Str == "" {
		t.Fatalf("custom call: %d %s", res.StatusCode, b)
	}
	res = h.do("POST", "/v1/responses", `{"model":"service","store":false,"input":[{"role":"user","content":"apply_patch fix it"},`+
		call.Raw+`,{"type":"custom_tool_call_output","call_id":"`+call.Get("call_id").Str+`","output":"patched"}],`+kindsTools+`}`)
	b = body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "apply_patch returned: patched" {
		t.Fatalf("custom result: %d %s", res.StatusCode, b)
	}
}

// A tool_choice that forces a hosted tool cannot be honoured: 400.
func TestForcedHostedToolRefused(t *testing.T) {
	h := start(t, nil)
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x",`+kindsTools+`,"tool_choice":{"type":"web_search"}}`),
		400, "unsupported_parameter", "tool_choice")
}

// tools.hosted: refuse refuses any hosted tool, naming it.
func TestHostedToolsRefuse(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Tools.Hosted = mapping.HostedRefuse })
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x",`+kindsTools+`}`), 400, "unsupported_parameter", "tools[2].type")
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"spawn_agent x","tools":[{"type":"custom","name":"c"}]}`)
	if b := body(t, res); res.StatusCode != 200 {
		t.Fatalf("without hosted tools: %d %s", res.StatusCode, b)
	}
}

// openai-go: the same round trips through the official SDK's types.
func TestNamespaceAndCustomToolsOpenAIGo(t *testing.T) {
	h := start(t, nil)
	client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
	ctx := context.Background()
	tools := []responses.ToolUnionParam{
		responses.ToolParamOfNamespace("Sub-agents.", "multi_agent_v1", []responses.NamespaceToolToolUnionParam{{OfFunction: &responses.NamespaceToolToolFunctionParam{
			Name: "spawn_agent", Parameters: map[string]any{"type": "object", "properties": map[string]any{"task": map[string]any{"type": "string"}}, "required": []string{"task"}}}}}),
		responses.ToolParamOfCustom("apply_patch"),
		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
	}
	turn := func(input responses.ResponseInputParam) *responses.Response {
		t.Helper()
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "service", Tools: tools, Store: openai.Bool(false),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ask := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("spawn_agent review", responses.EasyInputMessageRoleUser)}
	r := turn(ask)
	fc := r.Output[0].AsFunctionCall()
	if fc.Namespace != "multi_agent_v1" || fc.Name != "spawn_agent" || len(r.Tools) != 3 || r.Tools[2].Type != "web_search" {
		t.Fatalf("namespaced call: %s", r.RawJSON())
	}
	fp := fc.ToParam()
	out := responses.ResponseInputItemParamOfFunctionCallOutput("spawned")
	out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	r = turn(append(ask, responses.ResponseInputItemUnionParam{OfFunctionCall: &fp}, out))
	if r.OutputText() != "spawn_agent returned: spawned" {
		t.Fatalf("namespaced result: %s", r.RawJSON())
	}

	ask = responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("apply_patch fix it", responses.EasyInputMessageRoleUser)}
	r = turn(ask)
	cc := r.Output[0].AsCustomToolCall()
	if r.Output[0].Type != "custom_tool_call" || cc.Name != "apply_patch" || cc.Input != "fix it" {
		t.Fatalf("custom call: %s", r.RawJSON())
	}
	r = turn(append(ask, responses.ResponseInputItemParamOfCustomToolCall(cc.CallID, cc.Input, cc.Name),
		responses.ResponseInputItemParamOfCustomToolCallOutput(cc.CallID, "patched")))
	if r.OutputText() != "apply_patch returned: patched" {
		t.Fatalf("custom result: %s", r.RawJSON())
	}
}

// Streamed, the call items are framed in the client's shape too: the
// namespaced call's items carry its namespace, the custom call streams
// custom_tool_call items and its input events, and every done item is the
// item response.completed lists.
func TestNamespaceAndCustomToolsStreamed(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", `{"model":"service","stream":true,"input":"spawn_agent review apply_patch fix",`+kindsTools+`}`)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	var added, done []gjson.Result
	var input, completed string
	for _, ev := range readEvents(t, res.Body) {
		d := gjson.Parse(ev.Data)
		switch ev.Event {
		case "response.output_item.added":
			added = append(added, d.Get("item"))
		case "response.output_item.done":
			done = append(done, d.Get("item"))
		case "response.custom_tool_call_input.done":
			input = d.Get("input").Str
		case "response.completed":
			completed = d.Get("response.output").Raw
		}
	}
	if len(added) != 2 || added[0].Get("namespace").Str != "multi_agent_v1" || added[1].Get("type").Str != "custom_tool_call" {
		t.Fatalf("items added: %v", added)
	}
	if len(done) != 2 || input != "fix" || done[1].Get("input").Str != "fix" || done[0].Get("namespace").Str != "multi_agent_v1" {
		t.Fatalf("items done %v, custom input %q", done, input)
	}
	if want := "[" + done[0].Raw + "," + done[1].Raw + "]"; completed != want {
		t.Fatalf("response.completed output\n got: %s\nwant: %s", completed, want)
	}
}
