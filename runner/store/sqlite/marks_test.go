package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// strayLiveRuns counts the queued or running runs that start-up recovery
// would miss: below their host's mark, or of a host without one.
const strayLiveRunsSQL = `SELECT COUNT(*) FROM runs r
	WHERE status IN ('queued', 'running') AND NOT EXISTS (
		SELECT 1 FROM live_marks m WHERE m.host_id = r.host_id AND m.low_seq <= r.seq)`

func markOf(t *testing.T, s *Store, host string) int64 {
	t.Helper()
	var low int64
	if err := s.r.QueryRow(`SELECT low_seq FROM live_marks WHERE host_id = ?`, host).Scan(&low); err != nil {
		t.Fatalf("mark of %s: %v", host, err)
	}
	return low
}

// openMarking opens a Store on path that raises marks at every end
// (MarkEvery is a nanosecond).
func openMarking(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenWith(t.Context(), path, Options{MarkEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func markRun(id, host string) *runner.Run {
	return &runner.Run{ID: id, Status: runner.StatusRunning, SessionID: runner.NewID("sess_"),
		ThreadID: runner.NewID("thread_"), TenantID: "acme", CreatedAt: 1, HostID: host}
}

// Runs start, end, pause (waiting) and resume from several writers at
// once, on a host recovered here (whose mark is raised as runs end, at
// every end: MarkEvery is a nanosecond) and on one that is not, while
// another host's takeover scans sweep every mark. After
// every round no queued or running run lies below its host's mark; the
// owned host's mark has risen above the runs that ended; and a new Store
// on the same file, as after a crash, fails exactly the runs left live,
// resumed ones below the raised mark included.
func TestMarksKeepLiveRunsAboveThem(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runs.db")
	s := openMarking(t, path)
	if _, err := s.MarkInterrupted(ctx, "own", 1); err != nil {
		t.Fatal(err)
	}
	// Runs paused early, resumed after the owned mark has passed them.
	var paused []string
	for i := range 4 {
		id := fmt.Sprintf("run_paused%d", i)
		if err := s.StartRun(ctx, markRun(id, "own"), false, false); err != nil {
			t.Fatal(err)
		}
		if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusWaiting}); err != nil {
			t.Fatal(err)
		}
		paused = append(paused, id)
	}
	var firstSeq int64
	if err := s.r.QueryRow(`SELECT MIN(seq) FROM runs`).Scan(&firstSeq); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	live := map[string]string{} // id → host, as the test knows it
	// Beside the writers, another host's takeover scans, each sweeping
	// every host's mark (sweepMarksSQL); they take nothing (no lease ran
	// out before 0).
	s.marks.sweepEvery = time.Nanosecond
	for round := range 30 {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		scanned := make(chan struct{})
		go func() {
			defer close(scanned)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if runs, err := s.AcquireExpired(ctx, runner.LeaseClaim{HostID: "scanner", Now: 0, Until: 1}); err != nil || len(runs) != 0 {
					t.Errorf("a takeover scan took %d runs (%v)", len(runs), err)
					return
				}
			}
		}()
		for w := range 8 {
			seed := rng.Uint64()
			wg.Go(func() {
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for i := range 10 {
					host := "own"
					if r.IntN(4) == 0 {
						host = "other"
					}
					id := fmt.Sprintf("run_%d_%d_%d", round, w, i)
					if err := s.StartRun(ctx, markRun(id, host), false, false); err != nil {
						t.Error(err)
						return
					}
					switch r.IntN(5) {
					case 0: // left running (in the last rounds: earlier ones would pin the mark)
						if round < 25 {
							break
						}
						mu.Lock()
						live[id] = host
						mu.Unlock()
						continue
					case 1, 2: // paused and resumed, then ended
						for _, st := range []runner.Status{runner.StatusWaiting, runner.StatusRunning} {
							if err := s.Transition(ctx, id, runner.Transition{Status: st}); err != nil {
								t.Error(err)
								return
							}
						}
					}
					if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		<-scanned
		if round == 15 { // resume the old paused runs, far below the mark now
			if low := markOf(t, s, "own"); low <= firstSeq+100 {
				t.Fatalf("the owned mark stayed at %d: never raised", low)
			}
			for _, id := range paused {
				if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusRunning}); err != nil {
					t.Fatal(err)
				}
				live[id] = "own"
			}
		}
		var stray int
		if err := s.r.QueryRow(strayLiveRunsSQL).Scan(&stray); err != nil || stray != 0 {
			t.Fatalf("round %d: %d live runs below their host's mark (%v)", round, stray, err)
		}
	}
	// The mark stayed low enough for the resumed runs, and no lower than
	// the oldest of them.
	if low := markOf(t, s, "own"); low != firstSeq {
		t.Fatalf("the owned mark is %d after resuming runs of seq %d..", low, firstSeq)
	}

	// A crash: a second Store recovers each host.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, host := range []string{"own", "other"} {
		want := 0
		for _, h := range live {
			if h == host {
				want++
			}
		}
		n, err := s2.MarkInterrupted(ctx, host, 2)
		if err != nil || n != int64(want) {
			t.Fatalf("MarkInterrupted(%s) = %d, %v; want %d", host, n, err, want)
		}
	}
	var left int
	if err := s2.r.QueryRow(`SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d runs still live after recovery (%v)", left, err)
	}
}

// A raise that would pass a live run is not written: the owned host's
// mark stops at its oldest live run, however many runs end after it.
func TestMarkStopsAtOldestLiveRun(t *testing.T) {
	ctx := context.Background()
	s := openMarking(t, filepath.Join(t.TempDir(), "runs.db"))
	if _, err := s.MarkInterrupted(ctx, "own", 1); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := s.StartRun(ctx, markRun(fmt.Sprintf("run_%d", i), "own"), false, false); err != nil {
			t.Fatal(err)
		}
	}
	var oldest int64
	if err := s.r.QueryRow(`SELECT seq FROM runs WHERE id = 'run_3'`).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if i == 3 {
			continue
		}
		if err := s.Transition(ctx, fmt.Sprintf("run_%d", i), runner.Transition{Status: runner.StatusCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	if low := markOf(t, s, "own"); low != oldest {
		t.Fatalf("mark %d, want the oldest live run's seq %d", low, oldest)
	}
	if err := s.Transition(ctx, "run_3", runner.Transition{Status: runner.StatusFailed}); err != nil {
		t.Fatal(err)
	}
	if low := markOf(t, s, "own"); low != oldest {
		// Its own end cannot raise past it: it counted as live in its write.
		t.Fatalf("mark %d after the last end, want %d", low, oldest)
	}
}

// The runs recovery fails no longer hold the mark down: a Store that had
// counted them live (as storetest's recovery tests start them) forgets
// them when it recovers their host.
func TestRecoveryForgetsTheRunsItFailed(t *testing.T) {
	ctx := context.Background()
	s := openMarking(t, filepath.Join(t.TempDir(), "runs.db"))
	if err := s.StartRun(ctx, markRun("run_old", "own"), false, false); err != nil {
		t.Fatal(err)
	}
	if n, err := s.MarkInterrupted(ctx, "own", 1); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted = %d, %v; want 1", n, err)
	}
	for _, id := range []string{"run_a", "run_b"} {
		if err := s.StartRun(ctx, markRun(id, "own"), false, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"run_a", "run_b"} {
		if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	if err := s.r.QueryRow(`SELECT seq FROM runs WHERE id = 'run_b'`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if low := markOf(t, s, "own"); low != last {
		t.Fatalf("mark %d, want %d (run_b's, the last live run when its end raised it)", low, last)
	}
}

// TestRaiseScansOnceAnInterval: a look at the live runs that finds the
// mark where it was still waits out the interval before the next one, so
// the ends of runs behind a long one do not each scan every live run.
func TestRaiseScansOnceAnInterval(t *testing.T) {
	m := newLiveMarks(time.Hour)
	m.own("h")
	m.add("long", "h", 1)
	m.add("a", "h", 2)
	m.add("b", "h", 3)
	if host, low, ok := m.raiseOf("a"); !ok || host != "h" || low != 1 {
		t.Fatalf("first raise: %q %d %v, want h 1 true", host, low, ok)
	}
	m.setRaised("h", 1)
	m.remove("a")
	m.remove("long") // the least live seq moves to 3
	if _, _, ok := m.raiseOf("b"); ok {
		t.Fatal("a second raise inside the interval")
	}
	m.next.Store(0) // the interval has passed
	if host, low, ok := m.raiseOf("b"); !ok || host != "h" || low != 3 {
		t.Fatalf("raise after the interval: %q %d %v, want h 3 true", host, low, ok)
	}
	m.setRaised("h", 3)
	m.next.Store(0)
	if _, _, ok := m.raiseOf("b"); ok {
		t.Fatal("a raise to the value already written")
	}
	if m.next.Load() == 0 {
		t.Fatal("a look that found the mark unchanged did not start the interval")
	}
}

// A host that is gone (here "old": a host id a restart did not reuse)
// raises its mark no more. The takeover scan of another host, which
// starts at the least mark of all hosts, raises it past the runs it no
// longer has live (sweepMarksSQL): without that, every scan would read
// every run since the gone host's last raise. A host still alive ("busy")
// keeps its mark at its oldest live run, which its own recovery then
// fails, and no queued or running run is left below its host's mark.
func TestTakeoverSweepsAGoneHostsMark(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runs.db")
	s := openMarking(t, path)
	for _, h := range []string{"old", "busy"} {
		if _, err := s.MarkInterrupted(ctx, h, 1); err != nil {
			t.Fatal(err)
		}
	}
	start := func(id, host string, lease int64) {
		t.Helper()
		r := markRun(id, host)
		r.LeaseExpiresAt = lease
		if err := s.StartRun(ctx, r, false, false); err != nil {
			t.Fatal(err)
		}
	}
	endedAt := int64(2)
	end := func(id string) {
		t.Helper()
		if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted, EndedAt: &endedAt}); err != nil {
			t.Fatal(err)
		}
	}
	start("run_busylive", "busy", 1<<50) // a lease far in the future
	start("run_oldlive", "old", 10)      // a lease that ran out at 10
	start("run_oldpaused", "old", 0)
	if err := s.Transition(ctx, "run_oldpaused", runner.Transition{Status: runner.StatusWaiting}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		start(fmt.Sprintf("run_old%d", i), "old", 0)
		end(fmt.Sprintf("run_old%d", i))
		start(fmt.Sprintf("run_busy%d", i), "busy", 0)
		end(fmt.Sprintf("run_busy%d", i))
	}
	var busySeq, lastSeq int64
	if err := s.r.QueryRow(`SELECT seq FROM runs WHERE id = 'run_busylive'`).Scan(&busySeq); err != nil {
		t.Fatal(err)
	}
	if err := s.r.QueryRow(`SELECT MAX(seq) FROM runs`).Scan(&lastSeq); err != nil {
		t.Fatal(err)
	}
	if m := markOf(t, s, "old"); m > busySeq+1 {
		t.Fatalf("the old host's mark is %d before the takeover, want it at its first live run (≤ %d)", m, busySeq+1)
	}

	// A new process with a new host id: "old" is gone, "busy" is not.
	s2 := openMarking(t, path)
	if _, err := s2.MarkInterrupted(ctx, "new", 3); err != nil {
		t.Fatal(err)
	}
	runs, err := s2.AcquireExpired(ctx, runner.LeaseClaim{HostID: "new", Now: 100, Until: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != "run_oldlive" {
		t.Fatalf("took over %d runs (%v), want run_oldlive alone", len(runs), runs)
	}
	if m := markOf(t, s2, "old"); m != lastSeq+1 {
		t.Errorf("the gone host's mark is %d after the takeover, want past the last run (%d)", m, lastSeq+1)
	}
	if m := markOf(t, s2, "busy"); m != busySeq {
		t.Errorf("the live host's mark is %d after the takeover, want its oldest live run's seq %d", m, busySeq)
	}
	var stray int
	if err := s2.r.QueryRow(strayLiveRunsSQL).Scan(&stray); err != nil {
		t.Fatal(err)
	}
	if stray != 0 {
		t.Errorf("%d queued or running runs lie below their host's mark", stray)
	}
	if n, err := s2.MarkInterrupted(ctx, "busy", 4); err != nil || n != 1 {
		t.Errorf("the live host's recovery failed %d runs (%v), want its one live run", n, err)
	}
}
