package storetest

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// History checks a runner.HistoryStore (stored responses): begin and end,
// tenancy, the previous_response_id chain, items, batched events and
// deletion. open returns a fresh store implementing both interfaces.
func History(t *testing.T, open func(t *testing.T) runner.Store) {
	s := open(t)
	h, ok := s.(runner.HistoryStore)
	if !ok {
		t.Fatalf("%T does not implement runner.HistoryStore", s)
	}
	c := ctx(t)
	msg := func(role, text string) runner.Message { return runner.Message{Role: role, Content: text} }
	turn := func(run, prev, in, out string) {
		t.Helper()
		if err := h.BeginResponse(c, runner.ResponseRecord{RunID: run, TenantID: "t1", PreviousRunID: prev, Echo: []byte(`{"k":1}`)},
			[]runner.Item{{ID: "msg_in_" + run, RunID: run, Message: msg("user", in)}}); err != nil {
			t.Fatal(err)
		}
		if err := h.EndResponse(c, run, []byte(`{"id":"resp_`+run+`"}`),
			[]runner.Item{{ID: "msg_out_" + run, RunID: run, Output: true, Message: msg("assistant", out)}}); err != nil {
			t.Fatal(err)
		}
	}
	turn("r1", "", "a", "A")
	turn("r2", "r1", "b", "B")
	turn("r3", "r2", "c", "C")

	items, err := h.Conversation(c, "t1", "r3", runner.MaxTurns, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, it := range items {
		got += it.Message.Content
	}
	if got != "aAbBcC" {
		t.Errorf("conversation %q, want aAbBcC", got)
	}
	if items, _ := h.Conversation(c, "t1", "r3", 2, 0); len(items) != 4 {
		t.Errorf("conversation of 2 turns: %d items, want 4", len(items))
	}
	if items, _ := h.Conversation(c, "t2", "r3", runner.MaxTurns, 0); len(items) != 0 {
		t.Errorf("another tenant reads the conversation: %+v", items)
	}
	rec, err := h.GetResponse(c, "t1", "r2")
	if err != nil || rec.PreviousRunID != "r1" || string(rec.Object) != `{"id":"resp_r2"}` || string(rec.Echo) != `{"k":1}` {
		t.Errorf("GetResponse: %+v %v", rec, err)
	}
	if _, err := h.GetResponse(c, "t2", "r2"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("another tenant's response: %v", err)
	}
	if it, err := h.GetItem(c, "t1", "msg_out_r1"); err != nil || it.Message.Content != "A" || !it.Output {
		t.Errorf("GetItem: %+v %v", it, err)
	}
	if _, err := h.GetItem(c, "t2", "msg_out_r1"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("another tenant's item: %v", err)
	}
	if items, err := h.ResponseItems(c, "r2"); err != nil || len(items) != 2 || items[0].Output || !items[1].Output {
		t.Errorf("ResponseItems: %+v %v", items, err)
	}

	batch := func(first, n int) []runner.StoredEvent {
		var b []runner.StoredEvent
		for i := first; i < first+n; i++ {
			b = append(b, runner.StoredEvent{Seq: i, Name: "e", Data: []byte(`{"n":` + string(rune('0'+i%10)) + `}`)})
		}
		return b
	}
	if err := h.AppendEvents(c, "r3", 0, batch(0, 3)); err != nil {
		t.Fatal(err)
	}
	if err := h.AppendEvents(c, "r3", 0, batch(3, 4)); err != nil {
		t.Fatal(err)
	}
	evs, err := h.Events(c, "r3", 1, 10)
	if err != nil || len(evs) != 5 || evs[0].Seq != 2 || evs[4].Seq != 6 || string(evs[4].Data) != `{"n":6}` {
		t.Errorf("Events after 1: %+v %v", evs, err)
	}
	// A run that is no response (a native run) keeps its events too.
	if err := h.AppendEvents(c, "r_native", 0, batch(0, 2)); err != nil {
		t.Fatalf("events of a run that is no response: %v", err)
	}
	if evs, err := h.Events(c, "r_native", -1, 10); err != nil || len(evs) != 2 || evs[1].Seq != 1 {
		t.Errorf("events of a run that is no response: %+v %v", evs, err)
	}
	conversationBound(t, h)
	eventPages(t, h)

	if err := h.DeleteResponse(c, "t2", "r1"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("another tenant deletes: %v", err)
	}
	if err := h.DeleteResponse(c, "t1", "r3"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetResponse(c, "t1", "r3"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("deleted response found: %v", err)
	}
	if evs, _ := h.Events(c, "r3", -1, 10); len(evs) != 0 {
		t.Errorf("deleted response's events: %d", len(evs))
	}
	if _, err := h.GetItem(c, "t1", "msg_out_r3"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("deleted response's item: %v", err)
	}
	if err := h.DeleteResponse(c, "t1", "r3"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	// A deleted response's stream is not written to any more (its run
	// may still be running on some host).
	if err := h.AppendEvents(c, "r3", 0, batch(7, 2)); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("events of a deleted response: %v, want ErrNotFound", err)
	}
	if evs, _ := h.Events(c, "r3", -1, 10); len(evs) != 0 {
		t.Errorf("deleted response's events after a late write: %d", len(evs))
	}

	// A response deleted while it ran keeps nothing of its end (EndResponse
	// writes without reading first).
	if err := h.BeginResponse(c, runner.ResponseRecord{RunID: "r4", TenantID: "t1"},
		[]runner.Item{{ID: "msg_in_r4", RunID: "r4", Message: msg("user", "d")}}); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteResponse(c, "t1", "r4"); err != nil {
		t.Fatal(err)
	}
	if err := h.EndResponse(c, "r4", []byte(`{"id":"resp_r4"}`),
		[]runner.Item{{ID: "msg_out_r4", RunID: "r4", Output: true, Message: msg("assistant", "D")}}); err != nil {
		t.Fatal(err)
	}
	if items, err := h.ResponseItems(c, "r4"); err != nil || len(items) != 0 {
		t.Errorf("a response deleted while it ran kept %d items (%v)", len(items), err)
	}
	if _, err := h.GetResponse(c, "t1", "r4"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("a response deleted while it ran is found: %v", err)
	}

	// The final object comes back byte for byte, whether or not (and
	// however) it repeats the output text the store keeps in the item.
	text := "line one <b>&amp;</b> \"quoted\"\n\ttab é ☃ \u2028 " + strings.Repeat("token ", 40)
	quote := func(html bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(text)
		return strings.TrimSuffix(b.String(), "\n")
	}
	for i, obj := range []string{
		`{"id":"resp_x","output":[{"content":[{"text":` + quote(false) + `}]}],"output_text":` + quote(false) + `}`,
		`{"id":"resp_x","output":[{"content":[{"text":` + quote(true) + `}]}],"output_text":` + quote(true) + `,"x":""}`,
		`{"id":"resp_x","output_text":"something else"}`,
	} {
		run := "r_obj" + strconv.Itoa(i)
		if err := h.BeginResponse(c, runner.ResponseRecord{RunID: run, TenantID: "t1"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := h.EndResponse(c, run, []byte(obj),
			[]runner.Item{{ID: "msg_out_" + run, RunID: run, Output: true, Message: msg("assistant", text)}}); err != nil {
			t.Fatal(err)
		}
		rec, err := h.GetResponse(c, "t1", run)
		if err != nil || string(rec.Object) != obj {
			t.Errorf("object %d: got %s (%v)\nwant %s", i, rec.Object, err, obj)
		}
		if it, err := h.GetItem(c, "t1", "msg_out_"+run); err != nil || it.Message.Content != text {
			t.Errorf("output item %d: %+v %v", i, it, err)
		}
	}
	joined(t, s, h, text)

	// A first write too large for a shared batch (its own transaction),
	// then the end write after it.
	var many []runner.Item
	for i := range 300 {
		many = append(many, runner.Item{ID: runner.NewID(contract.MessagePrefix), RunID: "r_many", Message: msg("user", strconv.Itoa(i))})
	}
	if err := h.BeginResponse(c, runner.ResponseRecord{RunID: "r_many", TenantID: "t1"}, many); err != nil {
		t.Fatal(err)
	}
	if err := h.EndResponse(c, "r_many", nil, []runner.Item{{ID: "msg_out_many", RunID: "r_many", Output: true, Message: msg("assistant", "M")}}); err != nil {
		t.Fatal(err)
	}
	items, err = h.ResponseItems(c, "r_many")
	if err != nil || len(items) != 301 || items[299].Message.Content != "299" || !items[300].Output {
		t.Errorf("a response of 300 input items: %d items (%v)", len(items), err)
	}
}

// joined checks a runner.HistoryJoiner: the response's first write rides
// on StartRun and its last on the terminal Transition, committed with
// them, both or neither.
func joined(t *testing.T, s runner.Store, h runner.HistoryStore, text string) {
	j, ok := h.(runner.HistoryJoiner)
	if !ok {
		return
	}
	c := ctx(t)
	r := newRun("tj", runner.StatusRunning)
	rec := runner.ResponseRecord{RunID: r.ID, TenantID: "tj", Echo: []byte(`{"e":1}`)}
	in := []runner.Item{{ID: runner.NewID(contract.MessagePrefix), RunID: r.ID, Message: runner.Message{Role: "user", Content: "q"}}}
	jc, begun := j.JoinBegin(c, rec, in)
	if begun() {
		t.Fatal("joined before the run write")
	}
	if err := s.StartRun(jc, r, true, true); err != nil {
		t.Fatal(err)
	}
	if !begun() {
		t.Fatal("the response record did not ride on StartRun")
	}
	if got, err := h.GetResponse(c, "tj", r.ID); err != nil || string(got.Echo) != `{"e":1}` {
		t.Fatalf("joined response record: %+v %v", got, err)
	}
	object := `{"id":"resp_j","output_text":` + mustJSON(text) + `}`
	out := []runner.Item{{ID: contract.MessageID(r.ID), RunID: r.ID, Output: true, Message: runner.Message{Role: "assistant", Content: text}}}
	jc, ended := j.JoinEnd(c, r.ID, 0, []byte(object), out)
	end := int64(1_700_000_009)
	if err := s.Transition(jc, r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end, Output: text}); err != nil {
		t.Fatal(err)
	}
	if !ended() {
		t.Fatal("the final object did not ride on Transition")
	}
	got, err := h.GetResponse(c, "tj", r.ID)
	if err != nil || string(got.Object) != object {
		t.Fatalf("joined final object: %s %v", got.Object, err)
	}
	if items, err := h.ResponseItems(c, r.ID); err != nil || len(items) != 2 || !items[1].Output || items[1].Message.Content != text {
		t.Fatalf("joined items: %+v %v", items, err)
	}
	if run := mustGet(t, s, r.ID); run.Status != runner.StatusCompleted {
		t.Fatalf("run %s", run.Status)
	}

	// A start that fails (a thread in a session that is not there) keeps
	// no response record either.
	bad := newRun("tj", runner.StatusRunning)
	bad.SessionID = "sess_nowhere"
	jc, begun = j.JoinBegin(c, runner.ResponseRecord{RunID: bad.ID, TenantID: "tj"}, nil)
	if err := s.StartRun(jc, bad, false, true); err == nil {
		t.Fatal("StartRun in an unknown session succeeded")
	}
	if begun() {
		t.Error("a failed start reports its response record written")
	}
	if _, err := h.GetResponse(c, "tj", bad.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("a failed start left its response record: %v", err)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
