package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// longTurns is an input of earlier turns over 1,000 tokens (the offline
// provider counts words), then the new question.
func longTurns(question string) string {
	return `[{"role":"user","content":"my name is Ada ` + strings.TrimSpace(strings.Repeat("blah ", 1000)) + `"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"noted"}]},` +
		`{"role":"user","content":"` + question + `"}]`
}

// checkOpenResponses validates a Response object, and each stream event
// of a stream, against the Open Responses shapes.
func checkOpenResponses(t *testing.T, what, reply string, stream bool) {
	t.Helper()
	if !stream {
		conforms(t, openResponses(t, "ResponseResource"), what, reply)
		return
	}
	ev := openResponses(t, "StreamingEvent")
	for _, e := range readEvents(t, strings.NewReader(reply)) {
		conforms(t, ev, what+" event "+e.Event, e.Data)
		if r := gjson.Get(e.Data, "response"); r.Exists() {
			conforms(t, openResponses(t, "ResponseResource"), what+" "+e.Event, r.Raw)
		}
	}
}

// context_management [{"type":"compaction","compact_threshold":N}]: an
// input over N tokens is compacted first (a compaction run of what
// precedes the last user message, in the turn's session and thread), the Response's output starts with the
// compaction item, and the turn is answered from the summary and the new
// question; streamed, the item is output 0 and the message output 1. An
// input under N is answered as usual, without an item.
func TestResponsesContextManagement(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	cm := `,"context_management":[{"type":"compaction","compact_threshold":1000}]`
	code, reply := h.post("/v1/responses", `{"model":"service","store":false,"input":`+longTurns("what is my name")+cm+`}`)
	if code != 200 {
		t.Fatalf("%d %s", code, reply)
	}
	checkOpenResponses(t, "compacted turn", reply, false)
	out := gjson.Get(reply, "output").Array()
	if len(out) != 2 || out[0].Get("type").Str != "compaction" || out[1].Get("type").Str != "message" {
		t.Fatalf("output: want the compaction item, then the message: %s", reply)
	}
	conforms(t, openAPIDef(t, "testdata/openapi/compact.json", "CompactionBody"), "compaction item", out[0].Raw)
	wantSealed(t, out[0].Get("encrypted_content").Str, "k1", "my name is Ada")
	// The compaction summarises what precedes the question; the question
	// goes upstream once, after the summary.
	want := "You said: what is my name (earlier: Summary: my name is Ada " + strings.TrimSpace(strings.Repeat("blah ", 1000)) + ")"
	if got := gjson.Get(reply, "output_text").Str; got != want {
		t.Errorf("the turn was not answered from the summary and the question:\n got %.200q\nwant %.200q", got, want)
	}
	cmp := h.run("run_" + strings.TrimPrefix(out[0].Get("id").Str, "cmp_"))
	if cmp.Endpoint != contract.EndpointCompact || cmp.Status != runner.StatusCompleted {
		t.Errorf("the compaction run: %+v", cmp)
	}
	turn := h.run(gjson.Get(reply, "metadata.service.run_id").Str)
	if cmp.SessionID != turn.SessionID || cmp.ThreadID != turn.ThreadID {
		t.Errorf("the compaction ran in %s/%s, the turn in %s/%s", cmp.SessionID, cmp.ThreadID, turn.SessionID, turn.ThreadID)
	}
	// The item carries the context on: a later turn given it answers from it.
	code, next := h.post("/v1/responses", `{"model":"service","store":false,"input":[`+out[0].Raw+`,`+out[1].Raw+`,{"role":"user","content":"and now"}]}`)
	if !strings.HasPrefix(gjson.Get(next, "output_text").Str, "You said: and now (earlier: Summary: my name is Ada") {
		t.Errorf("the next turn: %d %.300s", code, next)
	}

	// Streamed: the compaction item's events come first, at output 0.
	code, stream := h.post("/v1/responses", `{"model":"service","stream":true,"input":`+longTurns("what is my name")+cm+`}`)
	if code != 200 {
		t.Fatalf("stream: %d %s", code, stream)
	}
	checkOpenResponses(t, "compacted stream", stream, true)
	evs := readEvents(t, strings.NewReader(stream))
	if len(evs) < 4 || evs[1].Event != "response.output_item.added" || gjson.Get(evs[1].Data, "item.type").Str != "compaction" ||
		evs[2].Event != "response.output_item.done" || gjson.Get(evs[2].Data, "output_index").Int() != 0 {
		t.Fatalf("stream: the compaction item does not open it: %+v", evs[:min(4, len(evs))])
	}
	for _, e := range evs[3:] {
		if i := gjson.Get(e.Data, "output_index"); i.Exists() && i.Int() != 1 {
			t.Errorf("event %s at output %d, want 1 (after the compaction item)", e.Event, i.Int())
		}
	}
	final := gjson.Get(evs[len(evs)-1].Data, "response")
	if final.Get("output.0.type").Str != "compaction" || final.Get("output.1.content.0.text").Str != want {
		t.Errorf("response.completed: %.300s", final.Raw)
	}
	// The stored Response reads back with the item.
	if got := h.getT1(t, "/v1/responses/"+final.Get("id").Str); gjson.Get(got, "output.0.type").Str != "compaction" {
		t.Errorf("retrieved: %.300s", got)
	}
}

// getT1 reads path as tenant t1, failing unless it answers 200.
func (h *harness) getT1(t *testing.T, path string) string {
	t.Helper()
	code, b := h.get(path)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, b)
	}
	return b
}

// Under the threshold nothing is compacted; invalid context_management is
// a 400 naming the field (OpenAI's minimum threshold is 1000); a compaction
// entry without a threshold is refused, as runedge does not know the
// model's context window to pick one.
func TestResponsesContextManagementRefusals(t *testing.T) {
	h := start(t, nil)
	code, reply := h.post("/v1/responses", `{"model":"service","input":"short","context_management":[{"type":"compaction","compact_threshold":1000}]}`)
	if code != 200 || gjson.Get(reply, "output.#").Int() != 1 || gjson.Get(reply, "output.0.type").Str != "message" {
		t.Errorf("under the threshold: %d %s", code, reply)
	}
	if code, reply := h.post("/v1/responses", `{"model":"service","input":"short","context_management":null}`); code != 200 {
		t.Errorf("context_management null: %d %s", code, reply)
	}
	for _, c := range []struct{ cm, code, param string }{
		{`{"type":"compaction","compact_threshold":1000}`, "invalid_body", "context_management"},
		{`[]`, "invalid_body", "context_management"},
		{`[1]`, "invalid_body", "context_management[0]"},
		{`[{"compact_threshold":1000}]`, "invalid_body", "context_management[0].type"},
		{`[{"type":"truncate","compact_threshold":1000}]`, "invalid_body", "context_management[0].type"},
		{`[{"type":"compaction","compact_threshold":0}]`, "invalid_body", "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":999}]`, "invalid_body", "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":1500.5}]`, "invalid_body", "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":"2000"}]`, "invalid_body", "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":2000},{"type":"compaction","compact_threshold":3000}]`, "invalid_body", "context_management[1]"},
		{`[{"type":"compaction"}]`, "unsupported_parameter", "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":null}]`, "unsupported_parameter", "context_management[0].compact_threshold"},
	} {
		code, e := h.post("/v1/responses", `{"model":"service","input":"hi","context_management":`+c.cm+`}`)
		if code != 400 || gjson.Get(e, "error.code").Str != c.code || gjson.Get(e, "error.param").Str != c.param {
			t.Errorf("context_management %s: %d %s, want 400 %s naming %s", c.cm, code, e, c.code, c.param)
		}
	}
}

// A compaction_trigger item (Codex's remote compaction) makes the turn the
// compaction: the Response's output is the compaction item alone, its
// summary of everything before the trigger (never the summary in clear);
// streamed, exactly one output_item.done, of the compaction item, and no
// text. The item carries the context to a new chain. A trigger that is not
// the final input item, or ends a conversation turn, is a 400 naming it.
func TestResponsesCompactionTrigger(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	in := `[{"role":"user","content":"my name is Ada"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]},` +
		`{"role":"user","content":"I like tea"},{"type":"compaction_trigger"}]`
	code, reply := h.post("/v1/responses", `{"model":"service","store":false,"input":`+in+`,"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`)
	if code != 200 {
		t.Fatalf("%d %s", code, reply)
	}
	checkOpenResponses(t, "compaction turn", reply, false)
	out := gjson.Get(reply, "output").Array()
	if len(out) != 1 || out[0].Get("type").Str != "compaction" || !strings.HasPrefix(out[0].Get("id").Str, "cmp_") ||
		gjson.Get(reply, "output_text").Str != "" || strings.Contains(reply, "Summary") {
		t.Fatalf("output: want the compaction item alone: %s", reply)
	}
	if r := h.run(gjson.Get(reply, "metadata.service.run_id").Str); r.Status != runner.StatusCompleted {
		t.Errorf("the compaction turn's run: %+v", r)
	}
	code, next := h.post("/v1/responses", `{"model":"service","store":false,"input":[`+out[0].Raw+`,{"role":"user","content":"who am I"}]}`)
	if want := "(earlier: Summary: my name is Ada | I like tea)"; code != 200 || !strings.Contains(gjson.Get(next, "output_text").Str, want) {
		t.Errorf("a new chain from the item: %d %.300s, want it to name %q", code, next, want)
	}

	code, stream := h.post("/v1/responses", `{"model":"service","store":false,"stream":true,"input":`+in+`}`)
	if code != 200 {
		t.Fatalf("stream: %d %s", code, stream)
	}
	checkOpenResponses(t, "compaction stream", stream, true)
	var names []string
	for _, e := range readEvents(t, strings.NewReader(stream)) {
		names = append(names, e.Event)
		if e.Event == "response.output_item.done" && gjson.Get(e.Data, "item.type").Str != "compaction" {
			t.Errorf("an output item other than the compaction: %s", e.Data)
		}
	}
	if got := strings.Join(names, ","); got != "response.created,response.output_item.added,response.output_item.done,response.completed" {
		t.Errorf("stream events: %s", got)
	}

	// Stored, it reads back as it was sent: the item alone.
	_, stored := h.post("/v1/responses", `{"model":"service","input":`+in+`}`)
	if got := h.getT1(t, "/v1/responses/"+gjson.Get(stored, "id").Str); gjson.Get(got, "output.#").Int() != 1 ||
		gjson.Get(got, "output.0.type").Str != "compaction" || strings.Contains(got, "Summary") {
		t.Errorf("a stored compaction turn reads back as %.300s", got)
	}

	code, e := h.post("/v1/responses", `{"model":"service","input":[{"type":"compaction_trigger"},{"role":"user","content":"hi"}]}`)
	if code != 400 || gjson.Get(e, "error.code").Str != "invalid_body" || gjson.Get(e, "error.param").Str != "input[0]" {
		t.Errorf("a trigger before another item: %d %s, want 400 invalid_body naming input[0]", code, e)
	}
	// In a conversation turn it would append the summary in clear: refused.
	_, conv := h.post("/v1/conversations", `{}`)
	code, e = h.post("/v1/responses", `{"model":"service","conversation":"`+gjson.Get(conv, "id").Str+`","input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"}]}`)
	if code != 400 || gjson.Get(e, "error.code").Str != "unsupported_parameter" || gjson.Get(e, "error.param").Str != "input[1]" {
		t.Errorf("a trigger in a conversation turn: %d %s, want 400 unsupported_parameter naming input[1]", code, e)
	}
}

// Codex compacts over the WebSocket too: a store:false turn continued on
// its socket, then a turn ending in a compaction_trigger, answers the
// compaction item alone; a new turn carrying it is answered from it.
func TestSocketCompactionTrigger(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	first := last(socketTurn(t, conn, create(`,"store":false,"input":"my name is Ada"`))).Get("response")
	evs := socketTurn(t, conn, create(`,"store":false,"previous_response_id":"`+first.Get("id").Str+`","input":[{"role":"user","content":"I like tea"},{"type":"compaction_trigger"}]`))
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Get("type").Str)
	}
	done := last(evs).Get("response")
	if strings.Join(types, ",") != "response.created,response.output_item.added,response.output_item.done,response.completed" ||
		done.Get("output.#").Int() != 1 || done.Get("output.0.type").Str != "compaction" {
		t.Fatalf("compaction turn: %v %s", types, done.Raw)
	}
	next := last(socketTurn(t, conn, create(`,"store":false,"input":[`+done.Get("output.0").Raw+`,{"role":"user","content":"who am I"}]`))).Get("response")
	if want := "You said: who am I (earlier: Summary: my name is Ada | I like tea)"; next.Get("output_text").Str != want {
		t.Errorf("after the compaction: %s, want %q", next.Raw, want)
	}
}
