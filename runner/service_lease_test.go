package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// marked is an agent whose answers start with a mark, so a test tells
// which host's attempt wrote a run's output.
type marked struct {
	runner.Agent
	mark string
	runs atomic.Int32
}

func (m *marked) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	m.runs.Add(1)
	res, err := m.Agent.Run(ctx, req, emit)
	res.Text = m.mark + res.Text
	return res, err
}

type leaseCounts struct{ held, fenced atomic.Int32 }

func (c *leaseCounts) LeasesHeld(n int) { c.held.Store(int32(n)) }
func (c *leaseCounts) TakenOver(string) {}
func (c *leaseCounts) FencedWrite()     { c.fenced.Add(1) }

// leaseHost is a service of host id on st, its runs under 300 ms leases
// renewed every 50 ms, its agent's answers marked with the host id.
func leaseHost(t *testing.T, st *sqlite.Store, id string, tokenDelay time.Duration, maxDrives int) (*runner.Service, *marked, *leaseCounts) {
	t.Helper()
	ag := &marked{Agent: agent.New(offline.New(offline.Config{TokenDelay: tokenDelay})), mark: id + ": "}
	counts := &leaseCounts{}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, Agent: ag, HostID: id,
		Leases: runner.LeaseConfig{Store: st, Length: 300 * time.Millisecond, Renew: 50 * time.Millisecond, MaxDrives: maxDrives, Observer: counts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc, ag, counts
}

func leaseStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func background(text string) runner.StartSpec {
	s := spec(text, false)
	s.Request.Background = true
	return s
}

// waitRun polls run id until it is no longer running.
func waitRun(t *testing.T, st runner.Store, id string, within time.Duration) runner.Run {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, err := st.GetRun(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Terminal() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after %s", id, r.Status, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A host that stalls (its renewals stop, its agent goes on) loses its
// background run to another host, which drives it again and records its
// own output; the stalled host's late end is refused by the fence.
func TestLeaseTakeoverFencesTheStalledHost(t *testing.T) {
	st := leaseStore(t)
	a, _, aCounts := leaseHost(t, st, "host-a", 15*time.Millisecond, 3)
	h, err := a.Start(t.Context(), background(longText(60)))
	if err != nil {
		t.Fatal(err)
	}
	id := h.Run().ID
	// host-a stalls: nothing renews its lease any more.
	a.Close()
	b, bAgent, _ := leaseHost(t, st, "host-b", 0, 3)
	_ = b
	r := waitRun(t, st, id, 5*time.Second)
	if r.Status != runner.StatusCompleted || r.HostID != "host-b" || bAgent.runs.Load() != 1 {
		t.Fatalf("run is %s on %q (host-b's agent ran %d times), want completed by host-b", r.Status, r.HostID, bAgent.runs.Load())
	}
	if got := r.Output; len(got) < 8 || got[:8] != "host-b: " {
		t.Fatalf("output %.20q is not host-b's", got)
	}
	// host-a comes back: its agent ends, its owner records the end.
	_, _, ferr := finish(h)
	if !errors.Is(ferr, runner.ErrFenced) || !errors.Is(ferr, runner.ErrNotRecorded) {
		t.Fatalf("the stalled host's late end: %v, want ErrFenced (not recorded)", ferr)
	}
	if aCounts.fenced.Load() != 1 {
		t.Fatalf("fenced writes counted %d, want 1", aCounts.fenced.Load())
	}
	if r2 := waitRun(t, st, id, time.Second); r2.Output != r.Output || r2.HostID != "host-b" || r2.Status != runner.StatusCompleted {
		t.Fatalf("after the late end: %s on %q, output %.20q", r2.Status, r2.HostID, r2.Output)
	}
}

// A foreground run whose host died is failed/interrupted by the host that
// takes it over; a waiting run is left alone.
func TestLeaseTakeoverEndsForegroundRuns(t *testing.T) {
	st := leaseStore(t)
	a, _, _ := leaseHost(t, st, "host-a", 20*time.Millisecond, 3)
	fg, err := a.Start(t.Context(), spec(longText(100), false))
	if err != nil {
		t.Fatal(err)
	}
	wait, err := a.Start(t.Context(), spec("wait", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transition(t.Context(), wait.Run().ID, runner.Transition{Status: runner.StatusWaiting, Reason: runner.ReasonApproval, Lease: 1}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	leaseHost(t, st, "host-b", 0, 3)
	r := waitRun(t, st, fg.Run().ID, 5*time.Second)
	wantState(t, r, runner.StatusFailed, runner.ReasonInterrupted)
	if r.HostID != "host-b" {
		t.Fatalf("interrupted by %q, want host-b", r.HostID)
	}
	time.Sleep(400 * time.Millisecond) // past another lease
	w, err := st.GetRun(t.Context(), "", wait.Run().ID)
	if err != nil || w.Status != runner.StatusWaiting || w.HostID != "host-a" {
		t.Fatalf("waiting run: %v %s on %q, want left waiting on host-a", err, w.Status, w.HostID)
	}
	if _, _, err := finish(fg); !errors.Is(err, runner.ErrFenced) {
		t.Fatalf("host-a's late end of its foreground run: %v, want ErrFenced", err)
	}
}

// Past runs.max_drives a background run taken over fails with a reason
// that says so.
func TestLeaseMaxDrives(t *testing.T) {
	st := leaseStore(t)
	var ids []string
	for i, host := range []string{"host-a", "host-b"} {
		svc, _, _ := leaseHost(t, st, host, 30*time.Millisecond, 2)
		if i == 0 {
			h, err := svc.Start(t.Context(), background(longText(200)))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, h.Run().ID)
			t.Cleanup(func() { finish(h) })
		} else {
			// host-b takes it over (drive 2) and stalls too.
			deadline := time.Now().Add(5 * time.Second)
			for {
				r, _ := st.GetRun(t.Context(), "", ids[0])
				if r.HostID == "host-b" || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		svc.Close()
	}
	_, cAgent, _ := leaseHost(t, st, "host-c", 0, 2)
	r := waitRun(t, st, ids[0], 5*time.Second)
	wantState(t, r, runner.StatusFailed, runner.ReasonMaxDrives)
	if r.Error == nil || cAgent.runs.Load() != 0 {
		t.Fatalf("error %+v, host-c's agent ran %d times: want a max_drives error and no third drive", r.Error, cAgent.runs.Load())
	}
	t.Logf("max_drives error: %s", r.Error.Message)
}

// A single SQLite host killed with a background run in flight drives it
// again at its next start, at once (its previous process is gone).
func TestLeaseRestartResumesBackgroundRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.New(offline.New(offline.Config{TokenDelay: 20 * time.Millisecond}))
	a, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, Agent: ag, HostID: "solo",
		Leases: runner.LeaseConfig{Store: st, Length: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	bg, err := a.Start(t.Context(), background(longText(100)))
	if err != nil {
		t.Fatal(err)
	}
	fg, err := a.Start(t.Context(), spec(longText(100), false))
	if err != nil {
		t.Fatal(err)
	}
	// The process dies: nothing more of it is written.
	a.Close()
	st.Close()
	st2, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	ag2 := &marked{Agent: agent.New(offline.New(offline.Config{})), mark: "again: "}
	b, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st2, Agent: ag2, HostID: "solo",
		Leases: runner.LeaseConfig{Store: st2, Length: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	r := waitRun(t, st2, bg.Run().ID, 5*time.Second)
	if r.Status != runner.StatusCompleted || len(r.Output) < 7 || r.Output[:7] != "again: " {
		t.Fatalf("background run after the restart: %s, output %.20q; want completed by the new process (with the hour-long lease unexpired)", r.Status, r.Output)
	}
	wantState(t, waitRun(t, st2, fg.Run().ID, time.Second), runner.StatusFailed, runner.ReasonInterrupted)
	_ = fg
}

// Renewals while runs start and end by the hundred lose none of them: a run
// admitted but not yet recorded, or already writing its end, is not named
// in a renewal (the store would report its lease missing or ended).
func TestLeaseRenewalsAmidStartsAndEnds(t *testing.T) {
	st := leaseStore(t)
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, HostID: "host-a",
		Agent:  agent.New(offline.New(offline.Config{TokenDelay: time.Millisecond})),
		Leases: runner.LeaseConfig{Store: st, Length: time.Second, Renew: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	errs := make(chan error, 400)
	for range 8 {
		go func() {
			for range 50 {
				h, err := svc.Start(t.Context(), spec("a few words here", false))
				if err == nil {
					_, _, err = finish(h)
				}
				errs <- err
			}
		}()
	}
	for range 400 {
		if err := <-errs; err != nil {
			t.Fatalf("a run failed while its host renewed: %v", err)
		}
	}
}

// slowStart is a store whose runs' start writes commit after their first
// lease has run out and return later still, as a large stored input's
// does on a loaded machine.
type slowStart struct {
	*sqlite.Store
	before, after time.Duration
}

func (s slowStart) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	time.Sleep(s.before)
	err := s.Store.StartRun(ctx, r, newSession, newThread)
	time.Sleep(s.after)
	return err
}

// A run whose start outlasts its first lease, before its write and after
// it (its joined items, its commit, its return to the service: what the
// lease counted from the write does not cover), is not taken over by its
// own host's takeover loop: it completes, and its end is not fenced.
func TestLeaseStartSlowerThanTheLease(t *testing.T) {
	st := leaseStore(t)
	counts := &leaseCounts{}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{
		Store: slowStart{Store: st, before: 400 * time.Millisecond, after: 400 * time.Millisecond},
		Agent: agent.New(offline.New(offline.Config{})), HostID: "host-a",
		Leases: runner.LeaseConfig{Store: st, Length: 300 * time.Millisecond, Renew: 50 * time.Millisecond, Observer: counts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	runsUnfenced(t, svc, st, counts, "hello")
}

// A renewal that waits in the store longer than a lease (behind a long
// write, on a loaded machine) writes leases that have run out by the time
// it returns; the takeover right after it must not take this host's own
// live run over: the run completes and its end is not fenced.
func TestLeaseRenewalSlowerThanTheLease(t *testing.T) {
	st := leaseStore(t)
	counts := &leaseCounts{}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{
		Store: st, HostID: "host-a",
		Agent:  agent.New(offline.New(offline.Config{TokenDelay: 100 * time.Millisecond})),
		Leases: runner.LeaseConfig{Store: slowRenew{Store: st, wait: 400 * time.Millisecond}, Length: 300 * time.Millisecond, Renew: 50 * time.Millisecond, Observer: counts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	runsUnfenced(t, svc, st, counts, "a few words for a second or so")
}

// runsUnfenced runs text on svc to its end and checks that the run
// completed in st with none of its writes fenced: its host kept it.
func runsUnfenced(t *testing.T, svc *runner.Service, st runner.Store, counts *leaseCounts, text string) {
	t.Helper()
	h, err := svc.Start(t.Context(), spec(text, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatalf("the run ended with %v", err)
	}
	r := waitRun(t, st, h.Run().ID, 5*time.Second)
	if r.Status != runner.StatusCompleted || counts.fenced.Load() != 0 {
		t.Fatalf("run %s/%s, %d fenced writes; want completed and none", r.Status, r.StatusReason, counts.fenced.Load())
	}
}

// slowRenew is a lease store whose renewals wait before they are written,
// as a renewal queued behind a long write does.
type slowRenew struct {
	*sqlite.Store
	wait time.Duration
}

func (s slowRenew) RenewLeases(ctx context.Context, held []runner.Lease, until int64) ([]string, error) {
	time.Sleep(s.wait)
	return s.Store.RenewLeases(ctx, held, until)
}

// A run whose start waits longer than its first lease before its write
// (behind the writer, or reading a large input) commits a lease counted
// from the write: another host's takeover that runs right after the start
// committed, before the start returns, does not take it, and the run
// completes on its own host, unfenced.
func TestLeaseSlowStartNotTakenByAnotherHost(t *testing.T) {
	st := leaseStore(t)
	const length = time.Second
	watched := &watchedTakeovers{Store: st}
	_, bAgent, err := leaseService(t, st, watched, "host-b", length)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := leaseService(t, startThenTakeover{Store: st, before: length + length/5, other: watched}, st, "host-a", length)
	if err != nil {
		t.Fatal(err)
	}
	h, err := a.Start(t.Context(), spec("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := finish(h)
	if err != nil {
		t.Fatalf("the run ended with %v (a fenced end: another host took it over)", err)
	}
	r := waitRun(t, st, h.Run().ID, 5*time.Second)
	if r.Status != runner.StatusCompleted || r.HostID != "host-a" || r.LeaseToken != 1 || watched.taken.Load() != 0 || bAgent.runs.Load() != 0 {
		t.Fatalf("run %s/%s on %q (token %d), host-b took %d runs; want completed by host-a, none taken",
			r.Status, r.StatusReason, r.HostID, r.LeaseToken, watched.taken.Load())
	}
	if len(res.Text) < 8 || res.Text[:8] != "host-a: " {
		t.Fatalf("output %.20q is not host-a's", res.Text)
	}
}

// leaseService is a service of host id on store st whose leases (of
// length, renewed every 50 ms) are kept by leases, its agent's answers
// marked with the host id.
func leaseService(t *testing.T, st runner.Store, leases runner.LeaseStore, id string, length time.Duration) (*runner.Service, *marked, error) {
	t.Helper()
	ag := &marked{Agent: agent.New(offline.New(offline.Config{})), mark: id + ": "}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, Agent: ag, HostID: id,
		Leases: runner.LeaseConfig{Store: leases, Length: length, Renew: 50 * time.Millisecond}})
	if err == nil {
		t.Cleanup(svc.Close)
	}
	return svc, ag, err
}

// watchedTakeovers is a host's lease store that counts the runs its
// takeovers took and tells a waiter when a takeover that began after it
// asked (next) has returned.
type watchedTakeovers struct {
	*sqlite.Store
	taken   atomic.Int32
	mu      sync.Mutex
	waiting []chan struct{}
}

func (w *watchedTakeovers) AcquireExpired(ctx context.Context, c runner.LeaseClaim) ([]runner.Run, error) {
	w.mu.Lock()
	waiting := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	runs, err := w.Store.AcquireExpired(ctx, c)
	w.taken.Add(int32(len(runs)))
	for _, ch := range waiting {
		close(ch)
	}
	return runs, err
}

// next is closed once a takeover that begins after the call has returned.
func (w *watchedTakeovers) next() <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiting = append(w.waiting, ch)
	w.mu.Unlock()
	return ch
}

// startThenTakeover is a store whose start writes wait before, longer
// than a lease, and once committed wait for another host's takeover
// (other) to have run before they return.
type startThenTakeover struct {
	*sqlite.Store
	before time.Duration
	other  *watchedTakeovers
}

func (s startThenTakeover) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	time.Sleep(s.before)
	if err := s.Store.StartRun(ctx, r, newSession, newThread); err != nil {
		return err
	}
	select {
	case <-s.other.next():
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("no takeover of the other host's ran after the start committed")
	}
}
