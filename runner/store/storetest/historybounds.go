package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/runedge/runedge/runner"
)

// conversationBound checks that Conversation stops at its byte bound
// (runner.ErrHistoryTooLarge) and answers in full within it. It uses the
// chain r1 ← r2 ← r3 History wrote.
func conversationBound(t *testing.T, h runner.HistoryStore) {
	t.Helper()
	c := ctx(t)
	if _, err := h.Conversation(c, "t1", "r3", runner.MaxTurns, 60); !errors.Is(err, runner.ErrHistoryTooLarge) {
		t.Errorf("conversation beyond 60 bytes: %v, want ErrHistoryTooLarge", err)
	}
	if items, err := h.Conversation(c, "t1", "r3", runner.MaxTurns, 1<<20); err != nil || len(items) != 6 {
		t.Errorf("conversation within its bound: %d items, %v", len(items), err)
	}
}

// eventPages checks that Events reads from the cursor in pages of whole
// stored batches: a reader that asks for one batch at a time walks the
// stream in order and sees every event once, and an empty page is the end.
func eventPages(t *testing.T, h runner.HistoryStore) {
	t.Helper()
	c := ctx(t)
	if err := h.BeginResponse(c, runner.ResponseRecord{RunID: "r_pages", TenantID: "t1"}, nil); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for _, n := range []int{5, 1, 7, 3} {
		var b []runner.StoredEvent
		for range n {
			b = append(b, runner.StoredEvent{Seq: seq, Name: "e", Data: []byte(`{}`)})
			seq++
		}
		if err := h.AppendEvents(c, "r_pages", 0, b); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	after, seen := 2, 0
	for {
		evs, err := h.Events(c, "r_pages", after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Seq != after+1 {
				t.Fatalf("page after %d holds seq %d", after, ev.Seq)
			}
			after = ev.Seq
			seen++
		}
		sizes = append(sizes, len(evs))
	}
	if seen != seq-3 || !slices.Equal(sizes, []int{2, 1, 7, 3}) {
		t.Errorf("pages of one batch after 2: sizes %v, %d events; want [2 1 7 3], %d", sizes, seen, seq-3)
	}
	if evs, err := h.Events(c, "r_pages", 5, 2); err != nil || len(evs) != 10 || evs[9].Seq != 15 {
		t.Errorf("two batches after 5: %d events, %v; want 10 ending at 15", len(evs), err)
	}
	if evs, err := h.Events(c, "r_pages", 15, 4); err != nil || len(evs) != 0 {
		t.Errorf("after the last event: %d events, %v", len(evs), err)
	}
}
