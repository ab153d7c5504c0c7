package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
)

// TestConversationRemembersWhatTheClientGot: a conversation holds the
// items of the Response the client received, after the result plugin
// (here the example redact plugin, examples/plugins/redact): the items
// GET /v1/conversations/{id}/items lists never show what the client did
// not see, and a custom tool call stays a custom_tool_call with the
// Response's id and call_id, which the next turn answers.
func TestConversationRemembersWhatTheClientGot(t *testing.T) {
	redact := plugintest.Build(t, "github.com/runedge/runedge/examples/plugins/redact")
	h := start(t, func(c *config.Config) {
		c.Chains[config.ChainResponses] = config.Chain{MapRequest: config.DefaultPlugin, Translate: redact}
	})
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	id := gjson.Get(created, "id").Str
	const secret = "jane.doe@example.com"
	turn := func(input string) string {
		t.Helper()
		return postT1(t, h, `{"model":"service","conversation":"`+id+`","input":`+input+`,`+kindsTools+`}`)
	}
	items := func() []gjson.Result {
		t.Helper()
		code, b := convDo(t, h, "GET", "/v1/conversations/"+id+"/items?order=asc&limit=100", "")
		if code != 200 {
			t.Fatalf("items: %d %s", code, b)
		}
		return gjson.Get(b, "data").Array()
	}

	first := turn(`"write to ` + secret + ` today"`)
	if text := gjson.Get(first, "output_text").Str; strings.Contains(text, secret) || !strings.Contains(text, "[redacted email]") {
		t.Fatalf("the client got %q; want the address redacted", text)
	}
	msgID := gjson.Get(first, "output.0.id").Str
	for _, it := range items() {
		if it.Get("role").Str == "user" {
			continue // the client's own input, as it sent it
		}
		if strings.Contains(it.Raw, secret) {
			t.Errorf("the conversation lists what the client did not see: %s", it.Raw)
		}
		if it.Get("id").Str == msgID && it.Get("content.0.text").Str != gjson.Get(first, "output_text").Str {
			t.Errorf("listed %q; the client got %q", it.Get("content.0.text").Str, gjson.Get(first, "output_text").Str)
		}
	}

	second := turn(`"apply_patch fix it"`)
	call := gjson.Get(second, "output.0")
	if call.Get("type").Str != "custom_tool_call" {
		t.Fatalf("second turn: %s", second)
	}
	found := false
	for _, it := range items() {
		if it.Get("id").Str == call.Get("id").Str {
			found = true
			if it.Get("type").Str != "custom_tool_call" || it.Get("call_id").Str != call.Get("call_id").Str ||
				it.Get("input").Str != call.Get("input").Str || it.Get("name").Str != "apply_patch" {
				t.Errorf("the custom call is listed as %s; the client got %s", it.Raw, call.Raw)
			}
		}
	}
	if !found {
		t.Errorf("the custom call %s is not listed", call.Get("id").Str)
	}
	third := turn(`[{"type":"custom_tool_call_output","call_id":"` + call.Get("call_id").Str + `","output":"patched"}]`)
	if got := gjson.Get(third, "output_text").Str; got != "apply_patch returned: patched" {
		t.Errorf("the call's result in the next turn: %q", got)
	}
}
