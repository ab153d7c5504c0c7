package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"
)

// tenantSocket opens /v1/responses as a WebSocket (coder/websocket) for
// tenant t1, as the conversation tests' HTTP requests are.
func tenantSocket(t *testing.T, h *harness) *websocket.Conn {
	t.Helper()
	c, _, err := rawSocket(t, h, bearer(tokApp, "x-service-tenant-id", "t1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// rawTurn sends one client event on c and reads the turn's events up to
// its terminal one (response.completed, .failed, .incomplete, or error).
func rawTurn(t *testing.T, c *websocket.Conn, event string) []gjson.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(event)); err != nil {
		t.Fatal(err)
	}
	var evs []gjson.Result
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		ev := gjson.ParseBytes(b)
		evs = append(evs, ev)
		switch ev.Get("type").Str {
		case "response.completed", "response.failed", "response.incomplete", "error":
			return evs
		}
	}
}

// convItems lists a conversation's items, oldest first, as role:text.
func convItems(t *testing.T, h *harness, id string) []string {
	t.Helper()
	code, items := convDo(t, h, "GET", "/v1/conversations/"+id+"/items?order=asc", "")
	if code != 200 {
		t.Fatalf("items of %s: %d %s", id, code, items)
	}
	var got []string
	for _, it := range gjson.Get(items, "data").Array() {
		got = append(got, it.Get("role").Str+":"+it.Get("content.0.text").Str)
	}
	return got
}

// conversation (string or {"id"}) in response.create works as on POST: the
// agent gets the conversation's items first, the turn is appended (the
// Conversations API shows it once the turn's events end), the Response
// echoes conversation {"id"}, and the turn runs in the conversation's
// session. With previous_response_id, a stored one or one the socket holds
// (store:false), it is an error event with the 400 of POST, nothing is
// appended, and the socket takes the next turn.
func TestSocketConversation(t *testing.T) {
	h := stateServer(t)
	code, created := convDo(t, h, "POST", "/v1/conversations", `{"items":[{"role":"user","content":"my name is Ada"}]}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, created)
	}
	id := gjson.Get(created, "id").Str
	session := "sess_" + strings.TrimPrefix(id, "conv_")
	c := tenantSocket(t, h)

	done := last(rawTurn(t, c, create(`,"input":"what is my name","conversation":"`+id+`"`)))
	r1 := done.Get("response")
	if done.Get("type").Str != "response.completed" || r1.Get("conversation.id").Str != id {
		t.Fatalf("turn with conversation: %s", done.Raw)
	}
	if n := r1.Get("usage.input_tokens").Int(); n != 4+4 {
		t.Errorf("input tokens %d, want 8: the conversation's items were not given first", n)
	}
	if s := r1.Get("metadata.service.session_id").Str; s != session {
		t.Errorf("the turn ran in session %q, want %q", s, session)
	}
	want := []string{"user:my name is Ada", "user:what is my name", "assistant:" + r1.Get("output_text").Str}
	if got := convItems(t, h, id); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("items after turn 1:\n%q\nwant\n%q", got, want)
	}

	// {"id"}, and store:false: the conversation keeps the turn all the same.
	done = last(rawTurn(t, c, create(`,"input":"again","store":false,"conversation":{"id":"`+id+`"}`)))
	if done.Get("type").Str != "response.completed" || done.Get("response.conversation.id").Str != id {
		t.Fatalf("turn with conversation {id}: %s", done.Raw)
	}
	want = append(want, "user:again", "assistant:"+done.Get("response.output_text").Str)
	if got := convItems(t, h, id); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("items after turn 2:\n%q\nwant\n%q", got, want)
	}
	local := done.Get("response.id").Str // held by this socket

	for _, prev := range []string{r1.Get("id").Str, local} {
		for _, conv := range []string{`"` + id + `"`, `{"id":"` + id + `"}`} {
			ev := last(rawTurn(t, c, create(`,"input":"x","conversation":`+conv+`,"previous_response_id":"`+prev+`"`)))
			if ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 || ev.Get("error.code").Str != "invalid_body" ||
				ev.Get("error.param").Str != "conversation" || ev.Get("error.type").Str != "invalid_request_error" {
				t.Errorf("conversation %s with previous_response_id %s: %s", conv, prev, ev.Raw)
			}
		}
	}
	if got := convItems(t, h, id); len(got) != len(want) {
		t.Errorf("refused turns added items: %q", got)
	}
	ok := last(rawTurn(t, c, create(`,"input":"still here","conversation":"`+id+`"`)))
	if ok.Get("type").Str != "response.completed" || len(convItems(t, h, id)) != len(want)+2 {
		t.Fatalf("turn after the errors: %s", ok.Raw)
	}
}

// A compaction's output (POST /v1/responses/compact) starts a new chain on
// the socket: the agent receives the summary (the offline provider names
// it), and a store:false continuation on the same socket carries it on.
func TestSocketCompactionStartsChain(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	prev := h.chainTurns("my name is Ada", "I like green tea")
	code, reply := h.post("/v1/responses/compact", `{"model":"service","previous_response_id":"`+prev+`"}`)
	if code != 200 {
		t.Fatalf("compact: %d %s", code, reply)
	}
	out := gjson.Get(reply, "output").Raw // the user messages, then the compaction item
	item := compactItem(t, reply)
	summary := "(earlier: Summary: my name is Ada | I like green tea)"

	c := tenantSocket(t, h)
	input := strings.TrimSuffix(out, "]") + `,{"role":"user","content":"what do you know"}]`
	done := last(rawTurn(t, c, create(`,"store":false,"input":`+input)))
	if got := done.Get("response.output_text").Str; done.Get("type").Str != "response.completed" || !strings.Contains(got, summary) {
		t.Fatalf("new chain from the compaction's output: %s, want the answer to name %q", done.Raw, summary)
	}
	next := last(rawTurn(t, c, create(`,"store":false,"input":"and now","previous_response_id":"`+done.Get("response.id").Str+`"`)))
	if got := next.Get("response.output_text").Str; next.Get("type").Str != "response.completed" || !strings.Contains(got, summary) {
		t.Errorf("continued on the socket: %s, want the answer to name %q", next.Raw, summary)
	}
	// The item alone, stored: as the compaction's output does.
	alone := last(rawTurn(t, c, create(`,"input":[`+item+`,{"role":"user","content":"what do you know"}]`)))
	if got := alone.Get("response.output_text").Str; !strings.Contains(got, summary) {
		t.Errorf("the compaction item alone: %s", alone.Raw)
	}
	// A tampered item is an error event (400), and the socket goes on.
	bad := withEncrypted(item, func(s string) string { return s[:len(s)-4] + "AAAA" })
	ev := last(rawTurn(t, c, create(`,"input":[`+bad+`]`)))
	if ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 {
		t.Errorf("tampered compaction item: %s", ev.Raw)
	}
	if ok := last(rawTurn(t, c, create(`,"input":"hi"`))); ok.Get("type").Str != "response.completed" {
		t.Errorf("turn after the refusal: %s", ok.Raw)
	}
}
