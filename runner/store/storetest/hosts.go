package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Start-up recovery of one host must not touch the live runs of another
// host sharing the store; runs recorded before hosts had ids ("") are
// recovered by any host.
func testMarkInterruptedPerHost(t *testing.T, s runner.Store) {
	onHost := func(host string) func(*runner.Run) { return func(r *runner.Run) { r.HostID = host } }
	a := mustCreate(t, s, "acme", runner.StatusRunning, 2, onHost("host-a"))
	b := mustCreate(t, s, "acme", runner.StatusRunning, 2, onHost("host-b"))
	old := mustCreate(t, s, "acme", runner.StatusQueued, 1, onHost(""))
	n, err := s.MarkInterrupted(ctx(t), "host-b", 1_700_000_999)
	if err != nil || n != 3 {
		t.Fatalf("MarkInterrupted(host-b) = %d, %v; want 3 (two of host-b, one without host)", n, err)
	}
	for _, id := range append(b, old...) {
		if r := mustGet(t, s, id); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
			t.Fatalf("run %s of the recovered host is %s/%s", id, r.Status, r.StatusReason)
		}
	}
	for _, id := range a {
		if r := mustGet(t, s, id); r.Status != runner.StatusRunning || r.HostID != "host-a" {
			t.Fatalf("run %s of another host was touched: %s (host %q)", id, r.Status, r.HostID)
		}
	}
}

// A purge forgets a run that ended before its cutoff whatever the runs
// before it and whatever the purges before it saw: a run that was
// running, or ended after the cutoff, when an earlier purge passed it is
// purged by the first purge whose cutoff it ended before, as is a run
// interrupted after purges passed it; the count is right across many
// runs (more than a store may walk in one transaction).
func testPurgeLater(t *testing.T, s runner.Store) {
	end := func(id string, at int64) {
		t.Helper()
		if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(at), Output: "secret answer"}); err != nil {
			t.Fatal(err)
		}
	}
	purge := func(before, want int64) {
		t.Helper()
		if n, err := s.PurgeBefore(ctx(t), before); err != nil || n != want {
			t.Fatalf("PurgeBefore(%d) = %d, %v; want %d", before, n, err, want)
		}
	}
	purged := func(id string, want bool) {
		t.Helper()
		r := mustGet(t, s, id)
		if got := r.Request == nil && r.Output == ""; got != want {
			t.Fatalf("run %s (%s, ended %v): purged %v, want %v", id, r.Status, r.EndedAt, got, want)
		}
	}
	waiting := mustCreate(t, s, "acme", runner.StatusRunning, 1, func(r *runner.Run) { r.HostID = "host-gone" })[0]
	ids := mustCreate(t, s, "acme", runner.StatusRunning, 300, nil)
	for i, id := range ids {
		switch {
		case i == 10: // running through the first purges
		case i == 20:
			end(id, after(250)) // ended after the first cutoff
		default:
			end(id, after(100))
		}
	}
	purge(after(200), 298)
	purge(after(200), 0)
	purged(ids[10], false)
	purged(ids[20], false)
	purged(waiting, false)
	purge(after(300), 1) // ids[20]
	purged(ids[20], true)
	purged(ids[10], false)
	// (a) The run that was running when the purges passed it ends.
	end(ids[10], after(250))
	later := mustCreate(t, s, "acme", runner.StatusRunning, 2, nil)
	end(later[0], after(260))
	purge(after(300), 2) // ids[10], later[0]
	purged(ids[10], true)
	purged(later[0], true)
	purged(later[1], false)
	// (b) The oldest run, waiting on a host that went away, is
	// interrupted after every purge so far passed it.
	if n, err := s.MarkInterrupted(ctx(t), "host-gone", after(280)); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted = %d, %v; want 1", n, err)
	}
	purge(after(300), 1)
	purged(waiting, true)
	purged(later[1], false)
	end(later[1], after(350))
	purge(after(400), 1)
	purged(later[1], true)
	purge(after(400), 0)
}

// PurgeBefore empties request and output of runs ended before the cutoff
// and keeps everything else: the rows, newer runs, unfinished runs.
func testPurgeBefore(t *testing.T, s runner.Store) {
	end := func(id string, at int64) {
		if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(at), Output: "secret answer",
			Usage: &runner.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := mustCreate(t, s, "acme", runner.StatusRunning, 3, nil)
	end(ids[0], after(100))
	end(ids[1], after(300))
	n, err := s.PurgeBefore(ctx(t), after(200))
	if err != nil || n != 1 {
		t.Fatalf("PurgeBefore = %d, %v; want 1", n, err)
	}
	old := mustGet(t, s, ids[0])
	if old.Request != nil || old.Output != "" {
		t.Fatalf("purged run still holds input %q / output %q", old.Request, old.Output)
	}
	if old.Status != runner.StatusCompleted || old.Usage == nil || old.Usage.TotalTokens != 3 || *old.EndedAt != after(100) {
		t.Fatalf("purge changed the run record itself: %+v", old)
	}
	for _, id := range ids[1:] {
		if r := mustGet(t, s, id); r.Request == nil {
			t.Fatalf("run %s (newer or unfinished) lost its input", id)
		}
	}
	if r := mustGet(t, s, ids[1]); r.Output != "secret answer" {
		t.Fatalf("newer run lost its output: %q", r.Output)
	}
	if n, err := s.PurgeBefore(ctx(t), after(200)); err != nil || n != 0 {
		t.Fatalf("second PurgeBefore = %d, %v; want 0", n, err)
	}
	// What the response history kept of a purged run goes too.
	hs, ok := s.(runner.HistoryStore)
	if !ok {
		return
	}
	items := func(id string, out bool) []runner.Item {
		return []runner.Item{{ID: runner.NewID(contract.MessagePrefix), RunID: id, Output: out, Message: runner.Message{Role: "user", Content: "secret"}}}
	}
	purged, kept := mustCreate(t, s, "acme", runner.StatusRunning, 1, nil)[0], mustCreate(t, s, "acme", runner.StatusRunning, 1, nil)[0]
	for _, id := range []string{purged, kept} {
		if err := hs.BeginResponse(ctx(t), runner.ResponseRecord{RunID: id, TenantID: "acme"}, items(id, false)); err != nil {
			t.Fatal(err)
		}
		if err := hs.EndResponse(ctx(t), id, []byte(`{"id":"resp"}`), items(id, true)); err != nil {
			t.Fatal(err)
		}
	}
	end(purged, after(100))
	end(kept, after(300))
	if _, err := s.PurgeBefore(ctx(t), after(200)); err != nil {
		t.Fatal(err)
	}
	if got, err := hs.ResponseItems(ctx(t), purged); err != nil || len(got) != 0 {
		t.Fatalf("purged response still has %d items (%v)", len(got), err)
	}
	if got, err := hs.ResponseItems(ctx(t), kept); err != nil || len(got) != 2 {
		t.Fatalf("newer response has %d items (%v), want 2", len(got), err)
	}
}

// Many runs started and finished at once (what group commit batches):
// every write is acknowledged only when durable and readable, each run
// reads back with its own outcome, and a refused write in a batch (a
// duplicate id) fails alone.
func testConcurrentStartsAndFinishes(t *testing.T, s runner.Store) {
	const n = 64
	taken := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), taken, true, true); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			r := newRun("acme", runner.StatusRunning)
			r.SessionID, r.ThreadID = runner.NewID(contract.SessionPrefix), runner.NewID(contract.ThreadPrefix)
			if i%8 == 0 { // a duplicate: refused without failing its batch
				r.ID = taken.ID
				if err := s.StartRun(ctx(t), r, true, true); err == nil {
					errs <- fmt.Errorf("duplicate run id accepted")
				}
				return
			}
			if err := s.StartRun(ctx(t), r, true, true); err != nil {
				errs <- fmt.Errorf("StartRun: %w", err)
				return
			}
			if got, err := s.GetRun(ctx(t), "acme", r.ID); err != nil || got.Status != runner.StatusRunning {
				errs <- fmt.Errorf("acknowledged start not readable: %v %v", got.Status, err)
				return
			}
			out := "answer " + r.ID
			if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(9), Output: out}); err != nil {
				errs <- fmt.Errorf("transition: %w", err)
				return
			}
			if got, err := s.GetRun(ctx(t), "", r.ID); err != nil || got.Status != runner.StatusCompleted || got.Output != out {
				errs <- fmt.Errorf("acknowledged outcome not readable: %+v %v", got, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
