package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// A history as Codex CLI and the Agents SDK replay it — reasoning items,
// assistant messages with phase, function and custom tool calls with
// their outputs — is accepted through openai-go; the upstream gets the
// conversation without the reasoning, the custom call as a function call
// of one string, and the stored input lists the reasoning and the phases.
// (A reasoning item's encrypted_content must be one runedge sealed:
// TestSealedReasoningRoundTrip.)
func TestReplayedHistoryAccepted(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, wholeOf("Done."))
		h := start(t, func(c *config.Config) { mapping(c); viaOpenAI(up.srv.URL, nil)(c) })
		client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
		text := func(s string) []responses.ResponseOutputMessageContentUnionParam {
			return []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{Text: s}}}
		}
		input := responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("list the files", responses.EasyInputMessageRoleUser),
			{OfReasoning: &responses.ResponseReasoningItemParam{ID: "rs_client1",
				Summary: []responses.ResponseReasoningItemSummaryParam{{Text: "The user wants ls."}}}},
			{OfOutputMessage: &responses.ResponseOutputMessageParam{ID: "msg_c1", Status: "completed", Phase: "commentary", Content: text("Looking.")}},
			{OfCustomToolCall: &responses.ResponseCustomToolCallParam{CallID: "call_c", Name: "apply_patch", Input: "*** Begin Patch"}},
			{OfCustomToolCallOutput: &responses.ResponseCustomToolCallOutputParam{CallID: "call_c",
				Output: responses.ResponseCustomToolCallOutputOutputUnionParam{OfString: openai.String("patched")}}},
			responses.ResponseInputItemParamOfFunctionCall(`{"cmd":"ls"}`, "call_f", "shell"),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_f"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("a.txt")}}},
			{OfOutputMessage: &responses.ResponseOutputMessageParam{ID: "msg_c2", Status: "completed", Phase: "final_answer", Content: text("One file.")}},
			responses.ResponseInputItemParamOfMessage("thanks", responses.EasyInputMessageRoleUser),
		}
		r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "service",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "Done." {
			t.Fatalf("output %q", r.OutputText())
		}
		msgs := gjson.Get(up.requests()[0], "messages")
		var roles []string
		for _, m := range msgs.Array() {
			roles = append(roles, m.Get("role").Str)
		}
		if got, want := len(roles), 8; got != want {
			t.Fatalf("upstream got %d messages %v, want %d (no reasoning): %s", got, roles, want, msgs.Raw)
		}
		if c := msgs.Get("2.tool_calls.0"); c.Get("function.name").Str != "apply_patch" || c.Get("function.arguments").Str != `{"input":"*** Begin Patch"}` ||
			msgs.Get("3.tool_call_id").Str != "call_c" || msgs.Get("3.content").Str != "patched" {
			t.Errorf("custom call upstream: %s", msgs.Raw)
		}
		res := h.do("GET", "/v1/responses/"+r.ID+"/input_items?order=asc", "")
		items := gjson.ParseBytes(body(t, res)).Get("data")
		rs := items.Get("1")
		if rs.Get("type").Str != "reasoning" || rs.Get("summary.0.text").Str != "The user wants ls." || rs.Get("encrypted_content").Exists() ||
			!strings.HasPrefix(rs.Get("id").Str, "rs_") {
			t.Errorf("stored reasoning item: %s", rs.Raw)
		}
		if items.Get("2.phase").Str != "commentary" || items.Get("7.phase").Str != "final_answer" {
			t.Errorf("stored phases: %s", items.Raw)
		}
	})
}

// A custom_tool_call_output that answers no call is refused as a
// function_call_output is, before any upstream call.
func TestUnansweredCustomOutputRefused(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", `{"model":"service","input":[{"role":"user","content":"x"},`+
		`{"type":"custom_tool_call_output","call_id":"call_nobody","output":"y"}]}`)
	b := body(t, res)
	if res.StatusCode != http.StatusBadRequest || gjson.GetBytes(b, "error.type").Str != "invalid_request_error" {
		t.Errorf("%d %s", res.StatusCode, b)
	}
	if gjson.GetBytes(b, "error.param").Str == "input[1].type" {
		t.Errorf("refused as an unknown item, not as an unanswered result: %s", b)
	}
}
