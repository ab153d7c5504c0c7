package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Leases runs the lease conformance tests (runner.LeaseStore): acquire
// with the start insert, renew in one call, expire, take over exactly
// once, fence the old holder's writes. open must return a store that
// implements runner.LeaseStore.
func Leases(t *testing.T, open func(t *testing.T) runner.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s runner.Store, l runner.LeaseStore)
	}{
		{"StartTakesTheLease", testLeaseAtStart},
		{"StartCountsTheLeaseFromItsWrite", testLeaseFromTheWrite},
		{"RenewInOneCall", testLeaseRenew},
		{"ExpiredIsTakenOnce", testLeaseExpire},
		{"StolenLeaseFencesTheOldHolder", testLeaseSteal},
		{"StolenLeaseFencesEvents", testLeaseFencedEvents},
		{"StolenLeaseFencesTheJoinedEnd", testLeaseFencedJoinedEnd},
		{"EndsWithTheRun", testLeaseEnds},
		{"ReleaseHandsOver", testLeaseRelease},
		{"DeadHostAndLegacyRuns", testLeaseDeadHost},
		{"ConcurrentTakeoversTakeEachRunOnce", testLeaseConcurrentTakeovers},
		{"RecoverLeavesTakenRuns", testLeaseRecoverAfterTakeover},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			l, ok := s.(runner.LeaseStore)
			if !ok {
				t.Fatalf("%T does not implement runner.LeaseStore", s)
			}
			tc.fn(t, s, l)
		})
	}
}

// leaseT0 is the tests' present, in Unix ms; leases run 10 s from it.
const leaseT0 = int64(1_700_000_000_000)

// leased starts n running runs of host under a lease that runs out at
// expires.
func leased(t *testing.T, s runner.Store, host string, n int, expires int64) []string {
	t.Helper()
	return mustCreate(t, s, "acme", runner.StatusRunning, n, func(r *runner.Run) {
		r.HostID, r.LeaseToken, r.LeaseExpiresAt = host, 1, expires
	})
}

func acquire(t *testing.T, l runner.LeaseStore, host string, now int64) []runner.Run {
	t.Helper()
	runs, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: host, Now: now, Until: now + 10_000})
	if err != nil {
		t.Fatalf("AcquireExpired: %v", err)
	}
	return runs
}

func runIDs(runs []runner.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	slices.Sort(out)
	return out
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func testLeaseAtStart(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 2, leaseT0+10_000)
	if got := acquire(t, l, "host-b", leaseT0+9_999); len(got) != 0 {
		t.Fatalf("a lease that has not run out was taken: %v", runIDs(got))
	}
	got := acquire(t, l, "host-b", leaseT0+10_001)
	if !slices.Equal(runIDs(got), sorted(ids)) {
		t.Fatalf("took %v once the leases ran out, want %v", runIDs(got), sorted(ids))
	}
	for _, r := range got {
		if r.HostID != "host-b" || r.LeaseToken != 2 || r.LeaseExpiresAt != leaseT0+10_001+10_000 {
			t.Fatalf("taken run %s: host %q token %d expires %d, want host-b, 2, %d", r.ID, r.HostID, r.LeaseToken, r.LeaseExpiresAt, leaseT0+20_001)
		}
		if len(r.Request) == 0 || r.Status != runner.StatusRunning {
			t.Fatalf("taken run %s comes without its request (%q) or not running (%s)", r.ID, r.Request, r.Status)
		}
		if g := mustGet(t, s, r.ID); g.HostID != "host-b" || g.LeaseToken != 2 {
			t.Fatalf("GetRun after a takeover: host %q token %d, want host-b, 2 (the run's drives)", g.HostID, g.LeaseToken)
		}
	}
}

// testLeaseFromTheWrite: a start whose lease counts from its write
// (Run.LeaseFor) commits an expiry taken as the store executes it, not the
// one reckoned when the run was prepared. Each run here was prepared a
// whole lease before its write (LeaseExpiresAt already past: the start
// outlasted its first lease, waiting behind the writer or reading a large
// input); another host's takeover right after the starts committed must
// take none of them, and one past the written expiries takes them all.
// Every kind of start insert goes through it: a run in a known thread, as
// the service makes it (fresh) and not, one opening its session and
// thread, and agent-sized requests kept whole then by reference to the
// first (the stores' shared-request inserts).
func testLeaseFromTheWrite(t *testing.T, s runner.Store, l runner.LeaseStore) {
	const length = 10 * time.Second
	before := time.Now().UnixMilli()
	prepared := func(r *runner.Run) {
		r.HostID, r.LeaseToken, r.LeaseFor = "host-a", 1, length
		r.LeaseExpiresAt = before - 1
	}
	var runs []*runner.Run
	start := func(r *runner.Run, newSession, newThread bool) {
		t.Helper()
		prepared(r)
		if err := s.StartRun(ctx(t), r, newSession, newThread); err != nil {
			t.Fatalf("StartRun: %v", err)
		}
		runs = append(runs, r)
	}
	fresh := newRun("acme", runner.StatusRunning)
	fresh.Attempts = 0
	start(fresh, false, false)
	start(newRun("acme", runner.StatusRunning), false, false)
	opener := newRun("acme", runner.StatusRunning)
	opener.SessionID, opener.ThreadID = contract.OwnSessionID(opener.ID), contract.OwnThreadID(opener.ID)
	start(opener, true, true)
	a := newAgentSession(t, s, "acme", 30)
	for turn := range 2 {
		r := newRun("acme", runner.StatusRunning)
		r.Request, r.RequestBounds = agentRequest(a.msgs, fmt.Sprintf(`,"max_output_tokens":%d`, turn+1))
		start(r, false, false)
		a.msgs = append(a.msgs, agentMessage("acme", len(a.msgs)), agentMessage("acme", len(a.msgs)+1))
	}
	after := time.Now().UnixMilli()
	if got := acquire(t, l, "host-b", time.Now().UnixMilli()); len(got) != 0 {
		t.Fatalf("another host took over %v right after their starts committed: a start's lease counts from its write", runIDs(got))
	}
	last := int64(0)
	for _, r := range runs {
		if r.LeaseExpiresAt < before+length.Milliseconds() || r.LeaseExpiresAt > after+length.Milliseconds() {
			t.Fatalf("run %s: StartRun gives the lease's expiry as %d, want between %d and %d (its write plus the lease)",
				r.ID, r.LeaseExpiresAt, before+length.Milliseconds(), after+length.Milliseconds())
		}
		last = max(last, r.LeaseExpiresAt)
	}
	if got := acquire(t, l, "host-b", last+1); len(got) != len(runs) {
		t.Fatalf("took %d runs once the written leases ran out, want %d", len(got), len(runs))
	}
}

func testLeaseRenew(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 5, leaseT0+10_000)
	other := leased(t, s, "host-c", 1, leaseT0+10_000)
	held := make([]runner.Lease, len(ids))
	for i, id := range ids {
		held[i] = runner.Lease{RunID: id, Token: 1}
	}
	lost, err := l.RenewLeases(ctx(t), held, leaseT0+30_000)
	if err != nil || len(lost) != 0 {
		t.Fatalf("RenewLeases = %v, %v; want every lease renewed", lost, err)
	}
	// Only the renewed ones outlive their first expiry.
	got := acquire(t, l, "host-b", leaseT0+20_000)
	if !slices.Equal(runIDs(got), other) {
		t.Fatalf("took %v at +20 s, want only the unrenewed %v", runIDs(got), other)
	}
	// A renewal naming a token it does not hold renews nothing.
	lost, err = l.RenewLeases(ctx(t), []runner.Lease{{RunID: ids[0], Token: 7}, {RunID: "run_unknown", Token: 1}}, leaseT0+90_000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(lost), sorted([]string{ids[0], "run_unknown"})) {
		t.Fatalf("lost %v, want the wrong token's run and the unknown run", lost)
	}
	// At +30 s the renewed leases run out, and so does host-b's of the
	// other run (+20 s + 10 s): a wrong token renewed nothing to +90 s.
	if got, want := acquire(t, l, "host-b", leaseT0+30_001), sorted(append(slices.Clone(ids), other...)); !slices.Equal(runIDs(got), want) {
		t.Fatalf("took %v at +30 s, want %v", runIDs(got), want)
	}
}

func testLeaseExpire(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 3, leaseT0)
	if got := acquire(t, l, "host-b", leaseT0+1); len(got) != 3 {
		t.Fatalf("took %d of 3 expired runs", len(got))
	}
	if got := acquire(t, l, "host-c", leaseT0+2); len(got) != 0 {
		t.Fatalf("a second host took %v again while host-b's leases hold", runIDs(got))
	}
	// Limit bounds one scan; the next one takes the rest.
	more := leased(t, s, "host-a", 3, leaseT0)
	first, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-c", Now: leaseT0 + 1, Until: leaseT0 + 20_000, Limit: 2})
	if err != nil || len(first) != 2 {
		t.Fatalf("AcquireExpired(limit 2) = %d runs, %v", len(first), err)
	}
	rest := acquire(t, l, "host-c", leaseT0+2)
	if all := append(runIDs(first), runIDs(rest)...); !slices.Equal(sorted(all), sorted(more)) {
		t.Fatalf("two scans took %v, want %v", all, more)
	}
	// Past host-b's lease, its runs go again, with the next token.
	again := acquire(t, l, "host-c", leaseT0+10_002)
	if !slices.Equal(runIDs(again), sorted(ids)) {
		t.Fatalf("took %v after host-b's leases ran out, want %v", runIDs(again), sorted(ids))
	}
	for _, r := range again {
		if r.LeaseToken != 3 {
			t.Fatalf("third acquisition of %s has token %d, want 3", r.ID, r.LeaseToken)
		}
	}
}

func testLeaseSteal(t *testing.T, s runner.Store, l runner.LeaseStore) {
	id := leased(t, s, "host-a", 1, leaseT0)[0]
	taken := acquire(t, l, "host-b", leaseT0+1)
	if len(taken) != 1 {
		t.Fatalf("took %d runs, want 1", len(taken))
	}
	tok := taken[0].LeaseToken
	// host-a stalled past its lease and comes back: its renewal finds
	// the lease lost, its events and its end are refused.
	lost, err := l.RenewLeases(ctx(t), []runner.Lease{{RunID: id, Token: 1}}, leaseT0+50_000)
	if err != nil || !slices.Equal(lost, []string{id}) {
		t.Fatalf("old holder's renewal = %v, %v; want its lease lost", lost, err)
	}
	late := runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(9), Output: "stale", Lease: 1,
		Usage: &runner.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}}
	if err := s.Transition(ctx(t), id, late); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's late end: %v, want ErrFenced", err)
	}
	if r := mustGet(t, s, id); r.Status != runner.StatusRunning || r.Output != "" || r.HostID != "host-b" {
		t.Fatalf("after a refused late end: status %s output %q host %q", r.Status, r.Output, r.HostID)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(10), Output: "fresh", Lease: tok}); err != nil {
		t.Fatalf("the new holder's end: %v", err)
	}
	if err := s.Transition(ctx(t), id, late); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's late end after the run ended: %v, want ErrFenced", err)
	}
	if r := mustGet(t, s, id); r.Status != runner.StatusCompleted || r.Output != "fresh" {
		t.Fatalf("run ended %s with %q, want completed with the new holder's output", r.Status, r.Output)
	}
}

func testLeaseEnds(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 3, leaseT0)
	if err := s.Transition(ctx(t), ids[0], runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(5), Lease: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Transition(ctx(t), ids[1], runner.Transition{Status: runner.StatusWaiting, Reason: runner.ReasonApproval, Lease: 1}); err != nil {
		t.Fatal(err)
	}
	// Neither the ended run nor the waiting one holds a lease: only the
	// running one is taken, and a renewal of the others reports them lost.
	if got := acquire(t, l, "host-b", leaseT0+1_000_000); !slices.Equal(runIDs(got), ids[2:]) {
		t.Fatalf("took %v, want only the running %v", runIDs(got), ids[2:])
	}
	lost, err := l.RenewLeases(ctx(t), []runner.Lease{{RunID: ids[0], Token: 1}, {RunID: ids[1], Token: 1}}, leaseT0+2_000_000)
	if err != nil || len(lost) != 2 {
		t.Fatalf("renewing an ended and a waiting run: lost %v, %v; want both", lost, err)
	}
	if r := mustGet(t, s, ids[1]); r.Status != runner.StatusWaiting {
		t.Fatalf("waiting run is %s", r.Status)
	}
	// An unfenced write (Lease 0) is not refused by the token.
	if err := s.Transition(ctx(t), ids[1], runner.Transition{Status: runner.StatusCancelled, Reason: runner.ReasonCancelRequested, EndedAt: ptr(6)}); err != nil {
		t.Fatalf("unfenced cancel of a waiting run: %v", err)
	}
}

func testLeaseRelease(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 2, leaseT0+10_000)
	if err := l.ReleaseLeases(ctx(t), []runner.Lease{{RunID: ids[0], Token: 1}, {RunID: ids[1], Token: 9}}); err != nil {
		t.Fatal(err)
	}
	// Released: taken at once, long before it would have run out; the
	// release naming a token it does not hold released nothing.
	if got := acquire(t, l, "host-b", leaseT0+1); !slices.Equal(runIDs(got), ids[:1]) {
		t.Fatalf("took %v after the release, want %v", runIDs(got), ids[:1])
	}
}

func testLeaseDeadHost(t *testing.T, s runner.Store, l runner.LeaseStore) {
	mine := leased(t, s, "host-a", 2, leaseT0+60_000)
	legacy := mustCreate(t, s, "acme", runner.StatusRunning, 1, func(r *runner.Run) { r.HostID = "host-a" })
	noHost := mustCreate(t, s, "acme", runner.StatusQueued, 1, func(r *runner.Run) { r.HostID = "" })
	others := leased(t, s, "host-z", 1, leaseT0+60_000)
	oldOther := mustCreate(t, s, "acme", runner.StatusRunning, 1, func(r *runner.Run) { r.HostID = "host-z" })
	// Runs without a lease (written before leases) are never taken for
	// expiry: their host may be an older version still running them.
	if got := acquire(t, l, "host-b", leaseT0+30_000); len(got) != 0 {
		t.Fatalf("took %v: leases that hold, and leaseless runs", runIDs(got))
	}
	// host-a at its start: its previous process is gone, so all its runs
	// (leased or not) and those without a host are taken.
	got, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-a", DeadHost: "host-a", Now: leaseT0 + 30_000, Until: leaseT0 + 40_000})
	if err != nil {
		t.Fatal(err)
	}
	want := sorted(append(append(slices.Clone(mine), legacy...), noHost...))
	if !slices.Equal(runIDs(got), want) {
		t.Fatalf("recovery took %v, want %v (not host-z's %v %v)", runIDs(got), want, others, oldOther)
	}
	for _, r := range got {
		if r.HostID != "host-a" || r.LeaseExpiresAt != leaseT0+40_000 {
			t.Fatalf("recovered run %s: host %q expires %d", r.ID, r.HostID, r.LeaseExpiresAt)
		}
	}
	// Taken again at the next start: they are still this host's.
	again, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-a", DeadHost: "host-a", Now: leaseT0 + 31_000, Until: leaseT0 + 41_000})
	if err != nil || !slices.Equal(runIDs(again), want) {
		t.Fatalf("second recovery took %v, %v; want %v", runIDs(again), err, want)
	}
}

func testLeaseConcurrentTakeovers(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 40, leaseT0)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for h := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				runs, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-" + string(rune('b'+h)), Now: leaseT0 + 1, Until: leaseT0 + 10_000, Limit: 4})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, r := range runs {
					seen[r.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Fatalf("run %s was taken %d times, want exactly once", id, seen[id])
		}
	}
}

// stolen starts a run of host-a with a lease (token 1) and a stored
// response record, and has host-b take it over (token 2) once the lease
// ran out.
func stolen(t *testing.T, s runner.Store, l runner.LeaseStore, h runner.HistoryStore) string {
	t.Helper()
	id := leased(t, s, "host-a", 1, leaseT0)[0]
	if err := h.BeginResponse(ctx(t), runner.ResponseRecord{RunID: id, TenantID: "acme", Background: true, Echo: []byte(`{"k":1}`)},
		[]runner.Item{{ID: "msg_in_" + id, RunID: id, Message: runner.Message{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	taken := acquire(t, l, "host-b", leaseT0+1)
	if len(taken) != 1 || taken[0].LeaseToken != 2 {
		t.Fatalf("took %v, want the run with token 2", taken)
	}
	return id
}

func history(t *testing.T, s runner.Store) runner.HistoryStore {
	t.Helper()
	h, ok := s.(runner.HistoryStore)
	if !ok {
		t.Fatalf("%T does not implement runner.HistoryStore", s)
	}
	return h
}

func eventBatch(first, n int, text string) []runner.StoredEvent {
	b := make([]runner.StoredEvent, n)
	for i := range b {
		b[i] = runner.StoredEvent{Seq: first + i, Name: "response.output_text.delta", Data: []byte(`{"delta":"` + text + `"}`)}
	}
	return b
}

// A stalled host flushing its events late, after another host took the
// run over, writes none of them: the batch is refused in the store, not
// only by the old holder's own bookkeeping.
func testLeaseFencedEvents(t *testing.T, s runner.Store, l runner.LeaseStore) {
	h := history(t, s)
	id := leased(t, s, "host-a", 1, leaseT0)[0]
	if err := h.BeginResponse(ctx(t), runner.ResponseRecord{RunID: id, TenantID: "acme", Background: true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.AppendEvents(ctx(t), id, 1, eventBatch(0, 2, "old")); err != nil {
		t.Fatalf("the holder's events: %v", err)
	}
	if taken := acquire(t, l, "host-b", leaseT0+1); len(taken) != 1 {
		t.Fatalf("took %d runs, want 1", len(taken))
	}
	if err := h.AppendEvents(ctx(t), id, 1, eventBatch(2, 3, "stale")); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's late events: %v, want ErrFenced", err)
	}
	if err := h.AppendEvents(ctx(t), id, 2, eventBatch(2, 2, "new")); err != nil {
		t.Fatalf("the new holder's events: %v", err)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(10), Lease: 2}); err != nil {
		t.Fatal(err)
	}
	// Refused after the run ended too: the token stays the new holder's.
	if err := h.AppendEvents(ctx(t), id, 1, eventBatch(4, 1, "stale")); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's events after the run ended: %v, want ErrFenced", err)
	}
	evs, err := h.Events(ctx(t), id, -1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, strconv.Itoa(e.Seq)+":"+string(e.Data))
	}
	want := []string{`0:{"delta":"old"}`, `1:{"delta":"old"}`, `2:{"delta":"new"}`, `3:{"delta":"new"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("stored events %v, want %v", got, want)
	}
	// A native run (no response record) is fenced the same way.
	native := leased(t, s, "host-a", 1, leaseT0)[0]
	if taken := acquire(t, l, "host-c", leaseT0+2); len(taken) != 1 {
		t.Fatalf("took %d runs, want 1", len(taken))
	}
	if err := h.AppendEvents(ctx(t), native, 1, eventBatch(0, 1, "stale")); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("a native run's late events: %v, want ErrFenced", err)
	}
	if err := h.AppendEvents(ctx(t), native, 2, eventBatch(0, 1, "new")); err != nil {
		t.Fatalf("a native run's new holder: %v", err)
	}
	if evs, err := h.Events(ctx(t), native, -1, 100); err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Data), "new") {
		t.Fatalf("native run's events %v, %v; want the new holder's one", evs, err)
	}
}

// The final object and output item joined to the old holder's terminal
// write are refused with it: what the client of a dead host's drive was
// sent is not the run's stored response once another host drives it.
func testLeaseFencedJoinedEnd(t *testing.T, s runner.Store, l runner.LeaseStore) {
	h := history(t, s)
	j, ok := s.(runner.HistoryJoiner)
	if !ok {
		t.Fatalf("%T does not implement runner.HistoryJoiner", s)
	}
	id := stolen(t, s, l, h)
	out := func(text string) []runner.Item {
		return []runner.Item{{ID: "msg_out_" + text + "_" + id, RunID: id, Output: true, Message: runner.Message{Role: "assistant", Content: text}}}
	}
	end := func(lease int64, text string) error {
		jc, ended := j.JoinEnd(ctx(t), id, lease, []byte(`{"id":"resp_`+text+`"}`), out(text))
		err := s.Transition(jc, id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(9), Output: text, Lease: lease})
		if err == nil && !ended() {
			t.Fatalf("the end of lease %d did not join its Transition", lease)
		}
		return err
	}
	if err := end(1, "stale"); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's late end: %v, want ErrFenced", err)
	}
	if items, err := h.ResponseItems(ctx(t), id); err != nil || len(items) != 1 || items[0].Output {
		t.Fatalf("after the refused end, items %+v, %v; want only the input", items, err)
	}
	if rec, err := h.GetResponse(ctx(t), "acme", id); err != nil || rec.Object != nil {
		t.Fatalf("after the refused end, object %s, %v; want none", rec.Object, err)
	}
	if err := end(2, "fresh"); err != nil {
		t.Fatalf("the new holder's end: %v", err)
	}
	if err := end(1, "stale"); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("the old holder's end after the run ended: %v, want ErrFenced", err)
	}
	items, err := h.ResponseItems(ctx(t), id)
	if err != nil || len(items) != 2 || items[1].Message.Content != "fresh" {
		t.Fatalf("items %+v, %v; want the input and the new holder's output", items, err)
	}
	if rec, err := h.GetResponse(ctx(t), "acme", id); err != nil || !strings.Contains(string(rec.Object), "resp_fresh") {
		t.Fatalf("object %s, %v; want the new holder's", rec.Object, err)
	}
	// An unfenced end (lease 0) still joins a refused Transition: a run a
	// cancel ended keeps what its client was sent.
	other := mustCreate(t, s, "acme", runner.StatusRunning, 1, nil)[0]
	if err := h.BeginResponse(ctx(t), runner.ResponseRecord{RunID: other, TenantID: "acme"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Transition(ctx(t), other, runner.Transition{Status: runner.StatusCancelled, Reason: runner.ReasonCancelRequested, EndedAt: ptr(5)}); err != nil {
		t.Fatal(err)
	}
	jc, _ := j.JoinEnd(ctx(t), other, 0, []byte(`{"id":"resp_sent"}`), nil)
	if err := s.Transition(jc, other, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(6)}); err == nil {
		t.Fatal("a second terminal write was recorded")
	}
	if rec, err := h.GetResponse(ctx(t), "acme", other); err != nil || !strings.Contains(string(rec.Object), "resp_sent") {
		t.Fatalf("unfenced joined end after a cancel: object %s, %v; want it kept", rec.Object, err)
	}
}

// MarkInterrupted (`runedge runs recover --host`) of a host whose runs
// another host took over leaves them alone: a takeover makes them the
// taker's (host_id), and MarkInterrupted marks only the recovered host's.
// Run at once with a takeover, each run is either taken (running, the
// taker's, its new token still ending it) or marked failed/interrupted,
// never both: the two are single writes of one row, each checking the
// other's effect (the status, the host) on the row as it is when it
// writes.
func testLeaseRecoverAfterTakeover(t *testing.T, s runner.Store, l runner.LeaseStore) {
	ids := leased(t, s, "host-a", 2, leaseT0)
	taken := acquire(t, l, "host-b", leaseT0+1)
	if n, err := s.MarkInterrupted(ctx(t), "host-a", 1_700_000_999); err != nil || n != 0 {
		t.Fatalf("MarkInterrupted(host-a) after host-b took its runs = %d, %v; want 0", n, err)
	}
	for _, r := range taken {
		if g := mustGet(t, s, r.ID); g.Status != runner.StatusRunning || g.HostID != "host-b" {
			t.Fatalf("taken run %s was touched: %s/%s host %q", r.ID, g.Status, g.StatusReason, g.HostID)
		}
		if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(10), Lease: r.LeaseToken}); err != nil {
			t.Fatalf("the taker's end of %s: %v", r.ID, err)
		}
	}
	if len(taken) != len(ids) {
		t.Fatalf("took %d of %d runs", len(taken), len(ids))
	}

	ids = leased(t, s, "host-a", 40, leaseT0)
	var (
		wg     sync.WaitGroup
		got    []runner.Run
		marked int64
		errs   [2]error
	)
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		got, errs[0] = l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-b", Now: leaseT0 + 1, Until: leaseT0 + 10_000})
	}()
	go func() {
		defer wg.Done()
		<-start
		marked, errs[1] = s.MarkInterrupted(ctx(t), "host-a", 1_700_001_000)
	}()
	close(start)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("AcquireExpired: %v; MarkInterrupted: %v", errs[0], errs[1])
	}
	took := map[string]bool{}
	for _, r := range got {
		took[r.ID] = true
	}
	var failed int64
	for _, id := range ids {
		r := mustGet(t, s, id)
		switch {
		case took[id] && r.Status == runner.StatusRunning && r.HostID == "host-b":
		case !took[id] && r.Status == runner.StatusFailed && r.StatusReason == runner.ReasonInterrupted:
			failed++
		default:
			t.Fatalf("run %s: taken %v, now %s/%s host %q: a run is either taken or marked interrupted", id, took[id], r.Status, r.StatusReason, r.HostID)
		}
	}
	if failed != marked || int(failed)+len(got) != len(ids) {
		t.Fatalf("%d taken, %d marked (MarkInterrupted said %d) of %d runs", len(got), failed, marked, len(ids))
	}
}
