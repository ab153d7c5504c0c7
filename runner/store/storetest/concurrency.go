package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// testConcurrentWriters hammers the store from many goroutines the way a
// busy host does (start, finish, read, list at once); run it under -race.
// Half the runs open a session and thread with StartRun (three inserts in
// one transaction), the other half insert only the run: neither may starve
// or deadlock the other, nor the transitions beside them.
func testConcurrentWriters(t *testing.T, s runner.Store) {
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			tenant := []string{"acme", "globex"}[w%2]
			for i := range each {
				r := newRun(tenant, runner.StatusRunning)
				var err error
				if i%2 == 0 {
					err = s.StartRun(ctx(t), r, false, false)
				} else {
					r.SessionID, r.ThreadID = runner.NewID(contract.SessionPrefix), runner.NewID(contract.ThreadPrefix)
					err = s.StartRun(ctx(t), r, true, true)
				}
				if err != nil {
					errs <- err
					return
				}
				if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(2)}); err != nil {
					errs <- err
					return
				}
				if _, err := s.GetRun(ctx(t), tenant, r.ID); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: tenant, Limit: 5}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	after := ""
	for {
		runs, more, err := s.ListRuns(ctx(t), runner.ListQuery{Status: runner.StatusCompleted, Limit: 100, After: after})
		if err != nil {
			t.Fatal(err)
		}
		total += len(runs)
		if !more {
			break
		}
		after = runs[len(runs)-1].ID
	}
	if total != workers*each {
		t.Fatalf("%d completed runs listed, want %d", total, workers*each)
	}
}

// testConcurrentTerminalWrites races terminal transitions on one run: exactly
// one may win, the rest see ErrNotFound.
func testConcurrentTerminalWrites(t *testing.T, s runner.Store) {
	for range 5 {
		id := reach(t, s, runner.StatusRunning)
		targets := []runner.Status{runner.StatusCompleted, runner.StatusFailed, runner.StatusCancelled, runner.StatusCompleted}
		var won atomic.Int32
		var wg sync.WaitGroup
		for _, to := range targets {
			wg.Go(func() {
				err := s.Transition(ctx(t), id, runner.Transition{Status: to, EndedAt: ptr(3)})
				switch {
				case err == nil:
					won.Add(1)
				case !errors.Is(err, runner.ErrNotFound):
					t.Errorf("losing terminal write: err = %v, want ErrNotFound", err)
				}
			})
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			t.Fatalf("%d terminal writes succeeded, want exactly 1", n)
		}
	}
}
