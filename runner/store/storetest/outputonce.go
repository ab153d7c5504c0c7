package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// OutputOnce checks that a stored response's run keeps its output text
// once (RATIONALE.md "Each item stored once"): when the response's end
// rides on the run's terminal Transition (runner.HistoryJoiner) and its
// first output item holds exactly the run's output text, the run keeps
// a reference to that item, and GetRun and ListRuns read the same text
// back. Nothing a client reads changes: a deleted or purged response's
// run reads no output, also when a later response still shares its
// output item; a run whose response was deleted while it ran, whose end
// was written alone, whose answer is short or is not its output item's
// text keeps the text itself. stored(t, s, runID) is the output text the
// store keeps in the run's own row. The response's final object, which
// repeats the output text, the echo's settings and the run's id
// (runner.CompactObject), reads back byte for byte, with or without its
// output item.
func OutputOnce(t *testing.T, open func(t *testing.T) runner.Store, stored func(t *testing.T, s runner.Store, runID string) string) {
	answer := long("answer")
	for _, tc := range []struct {
		name string
		// text is the output item's, output the run's; joined ends the
		// response with the Transition; deleted deletes the response
		// before its end.
		text, output    string
		joined, deleted bool
		// kept is the text the run keeps in its own row; reads what
		// GetRun reads.
		kept, reads string
	}{
		{name: "Joined", text: answer, output: answer, joined: true, kept: "", reads: answer},
		{name: "WrittenAlone", text: answer, output: answer, kept: answer, reads: answer},
		{name: "Short", text: "ok", output: "ok", joined: true, kept: "ok", reads: "ok"},
		{name: "NotTheItemsText", text: "", output: `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":\"` + answer + `\"}"}}]`,
			joined: true, kept: "=output", reads: "=output"},
		{name: "DeletedWhileRunning", text: answer, output: answer, joined: true, deleted: true, kept: answer, reads: answer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			kept, reads := tc.kept, tc.reads
			if kept == "=output" {
				kept, reads = tc.output, tc.output
			}
			id := endedTurn(t, s, "t1", nil, tc.text, tc.output, tc.joined, tc.deleted, 100)
			checkOutput(t, s, "t1", id, reads)
			if got := stored(t, s, id); got != kept {
				t.Fatalf("run %s keeps the output text %q in its row, want %q", id, got, kept)
			}
		})
	}
	t.Run("FinalObject", func(t *testing.T) {
		s := open(t)
		h := s.(runner.HistoryStore)
		c := t.Context()
		echo := `{"instructions":"be <brief>","metadata":{},"temperature":1,"tools":[{"type":"function","name":"f","parameters":{}}],"store":true}`
		for _, tc := range []struct {
			name   string
			joined bool
			items  bool // the response has an output item
		}{{"Joined", true, true}, {"WrittenAlone", false, true}, {"NoOutputItem", true, false}} {
			r := newRun("t1", runner.StatusRunning)
			r.Endpoint = contract.EndpointResponses
			r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
			if err := s.StartRun(c, r, false, false); err != nil {
				t.Fatal(err)
			}
			in := []runner.Item{{ID: runner.InputItemID(r.ID, 0, "user"), RunID: r.ID, Message: runner.Message{Role: "user", Content: long("q")}}}
			if err := h.BeginResponse(c, runner.ResponseRecord{RunID: r.ID, TenantID: "t1", Echo: []byte(echo)}, in); err != nil {
				t.Fatal(err)
			}
			text, _ := json.Marshal(answer)
			object := `{"id":"` + contract.ResponseID(r.ID) + `","instructions":"be <brief>","output":[{"id":"` + contract.MessageID(r.ID) +
				`","content":[{"text":` + string(text) + `}]}],"output_text":` + string(text) + `,"store":true,"temperature":1,` +
				`"tools":[{"type":"function","name":"f","parameters":{}}],"metadata":{"run_id":"` + r.ID + `"}}`
			var out []runner.Item
			if tc.items {
				out = []runner.Item{{ID: contract.MessageID(r.ID), RunID: r.ID, Output: true, Message: runner.Message{Role: "assistant", Content: answer}}}
			} else {
				object = strings.Replace(object, string(text), `"other"`, 2)
			}
			ctx, ended := c, runner.NotJoined
			if j, ok := s.(runner.HistoryJoiner); ok && tc.joined {
				ctx, ended = j.JoinEnd(c, r.ID, 0, []byte(object), out)
			}
			if err := s.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(100), Output: answer}); err != nil {
				t.Fatal(err)
			}
			if !ended() {
				if err := h.EndResponse(c, r.ID, []byte(object), out); err != nil {
					t.Fatal(err)
				}
			}
			rec, err := h.GetResponse(c, "t1", r.ID)
			if err != nil || string(rec.Object) != object || string(rec.Echo) != echo {
				t.Fatalf("%s: the response reads back as\n%s\n%s, %v; want\n%s\n%s", tc.name, rec.Object, rec.Echo, err, object, echo)
			}
		}
	})
	t.Run("DeleteForgets", func(t *testing.T) {
		s := open(t)
		h := s.(runner.HistoryStore)
		c := t.Context()
		first := endedTurn(t, s, "t1", nil, answer, answer, true, false, after(100))
		// The next turn resends the first one's input and answer: it shares
		// them, the answer's row included.
		items, err := h.ResponseItems(c, first)
		if err != nil {
			t.Fatal(err)
		}
		var history []runner.Message
		for _, it := range items {
			history = append(history, it.Message)
		}
		second := endedTurn(t, s, "t1", history, long("answer 2"), long("answer 2"), true, false, after(300))
		if err := h.DeleteResponse(c, "t1", first); err != nil {
			t.Fatal(err)
		}
		checkOutput(t, s, "t1", first, "")
		checkOutput(t, s, "t1", second, long("answer 2"))
		if _, err := s.PurgeBefore(c, after(400)); err != nil {
			t.Fatal(err)
		}
		checkOutput(t, s, "t1", second, "")
	})
}

// endedTurn plays a stored response of one new user message after
// history, ended completed at endedAt with output (the run's) and an
// output item whose text is text; it returns the run's id.
func endedTurn(t *testing.T, s runner.Store, tenant string, history []runner.Message, text, output string, joined, deleted bool, endedAt int64) string {
	t.Helper()
	c := t.Context()
	h := s.(runner.HistoryStore)
	r := newRun(tenant, runner.StatusRunning)
	r.Endpoint = contract.EndpointResponses
	r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
	if err := s.StartRun(c, r, false, false); err != nil {
		t.Fatal(err)
	}
	in := append(append([]runner.Message(nil), history...), runner.Message{Role: "user", Content: long("question")})
	input := make([]runner.Item, len(in))
	for i, m := range in {
		input[i] = runner.Item{ID: runner.InputItemID(r.ID, i, m.Role), RunID: r.ID, Message: m}
	}
	if err := h.BeginResponse(c, runner.ResponseRecord{RunID: r.ID, TenantID: tenant, Echo: []byte(`{"k":1}`)}, input); err != nil {
		t.Fatal(err)
	}
	if deleted {
		if err := h.DeleteResponse(c, tenant, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	out := []runner.Item{{ID: contract.MessageID(r.ID), RunID: r.ID, Output: true, Message: runner.Message{Role: "assistant", Content: text}}}
	object := []byte(`{"id":"` + contract.ResponseID(r.ID) + `"}`)
	ctx, ended := c, runner.NotJoined
	if j, ok := s.(runner.HistoryJoiner); ok && joined {
		ctx, ended = j.JoinEnd(c, r.ID, 0, object, out)
	}
	if err := s.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(endedAt), Output: output}); err != nil {
		t.Fatal(err)
	}
	if !ended() {
		if err := h.EndResponse(c, r.ID, object, out); err != nil {
			t.Fatal(err)
		}
	}
	return r.ID
}

// checkOutput checks that run id reads back output, alone and listed.
func checkOutput(t *testing.T, s runner.Store, tenant, id, output string) {
	t.Helper()
	c := t.Context()
	r, err := s.GetRun(c, tenant, id)
	if err != nil || r.Output != output {
		t.Fatalf("GetRun(%s).Output = %q, %v; want %q", id, r.Output, err, output)
	}
	runs, _, err := s.ListRuns(c, runner.ListQuery{TenantID: tenant, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			if r.Output != output {
				t.Fatalf("ListRuns reads run %s's output as %q, want %q", id, r.Output, output)
			}
			return
		}
	}
	t.Fatalf("ListRuns does not list run %s", id)
}
