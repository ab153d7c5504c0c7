package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// POST /v1/responses/compact with conversation (a string or {"id"}): the
// conversation's items are what is compacted (the user messages of the
// reply, then one compaction item whose summary the agent made of them);
// the conversation gains nothing; with previous_response_id it is a 400
// naming conversation, as on /v1/responses; unknown or another tenant's
// is a 404.
func TestCompactConversation(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	code, conv := h.post("/v1/conversations", `{"items":[{"type":"message","role":"user","content":"my name is Ada"},`+
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello Ada"}]},`+
		`{"type":"message","role":"user","content":"I like green tea"}]}`)
	if code != 200 {
		t.Fatalf("create conversation: %d %s", code, conv)
	}
	id := gjson.Get(conv, "id").Str
	for _, ref := range []string{`"` + id + `"`, `{"id":"` + id + `"}`} {
		code, reply := h.post("/v1/responses/compact", `{"model":"service","conversation":`+ref+`}`)
		if code != 200 {
			t.Fatalf("compact %s: %d %s", ref, code, reply)
		}
		conforms(t, openAPIDef(t, "testdata/openapi/compact.json", "CompactResource"), "compaction of a conversation", reply)
		out := gjson.Get(reply, "output").Array()
		var users []string
		for _, it := range out[:len(out)-1] {
			users = append(users, it.Get("content.0.text").Str)
		}
		if got, want := strings.Join(users, "|"), "my name is Ada|I like green tea"; got != want {
			t.Errorf("%s: user messages %q, want %q", ref, got, want)
		}
		item := compactItem(t, reply)
		code, answer := h.post("/v1/responses", `{"model":"service","store":false,"input":[`+item+`,{"role":"user","content":"what do you know"}]}`)
		if want := "(earlier: Summary: my name is Ada | I like green tea)"; code != 200 || !strings.Contains(gjson.Get(answer, "output_text").Str, want) {
			t.Errorf("%s: the summary does not carry the conversation: %d %s, want it to name %q", ref, code, answer, want)
		}
	}
	// The compaction adds nothing to the conversation.
	_, items := h.get("/v1/conversations/" + id + "/items")
	if n := gjson.Get(items, "data.#").Int(); n != 3 {
		t.Errorf("the conversation has %d items after compacting, want 3: %s", n, items)
	}
	code, e := h.post("/v1/responses/compact", `{"model":"service","conversation":"`+id+`","previous_response_id":"resp_x"}`)
	if code != 400 || gjson.Get(e, "error.param").Str != "conversation" || gjson.Get(e, "error.code").Str != "invalid_body" {
		t.Errorf("conversation with previous_response_id: %d %s, want 400 invalid_body naming conversation", code, e)
	}
	code, e = h.post("/v1/responses/compact", `{"model":"service","conversation":"conv_nope"}`)
	if code != 404 || gjson.Get(e, "error.code").Str != "not_found" {
		t.Errorf("unknown conversation: %d %s, want 404", code, e)
	}
	res := h.do("POST", "/v1/responses/compact", `{"model":"service","conversation":"`+id+`"}`, "x-service-tenant-id", "t2")
	if b := body(t, res); res.StatusCode != 404 {
		t.Errorf("another tenant's conversation: %d %s, want 404", res.StatusCode, b)
	}
}

// get reads path as tenant t1 and returns the status and body.
func (h *harness) get(path string) (int, string) {
	h.t.Helper()
	res := h.do("GET", path, "", "x-service-tenant-id", "t1")
	return res.StatusCode, string(body(h.t, res))
}
