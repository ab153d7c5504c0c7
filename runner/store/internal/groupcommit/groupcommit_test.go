package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// fakeTx records the ops of one transaction; the fake "database" keeps
// the committed ones. The writer is tested against it for its batching
// rules; the drivers' tests (storetest) run it against real databases.
type fakeTx struct{ ops []int }

type fakeDB struct {
	mu        sync.Mutex
	committed []int
	commits   int
	failBegin error
}

func (d *fakeDB) Begin(context.Context) (*fakeTx, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failBegin != nil {
		return nil, d.failBegin
	}
	return &fakeTx{}, nil
}

func (d *fakeDB) Commit(_ context.Context, tx *fakeTx) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.committed = append(d.committed, tx.ops...)
	d.commits++
	return nil
}

func (d *fakeDB) Rollback(context.Context, *fakeTx) {}

func (d *fakeDB) has(n int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, v := range d.committed {
		if v == n {
			return true
		}
	}
	return false
}

// Do returns only after the write is committed, and concurrent writes
// share transactions.
func TestDoReturnsAfterCommitAndBatches(t *testing.T) {
	db := &fakeDB{}
	w := New[*fakeTx](db, Config{Window: time.Millisecond, MaxBatch: 16})
	defer w.Close()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			err := w.Do(t.Context(), func(_ context.Context, tx *fakeTx) error {
				tx.ops = append(tx.ops, i)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			if !db.has(i) {
				t.Errorf("Do(%d) returned before its commit", i)
			}
		})
	}
	wg.Wait()
	batches, ops := w.Stats()
	if ops != 64 || batches >= 64 || db.commits != int(batches) {
		t.Fatalf("%d ops in %d batches (%d commits); want batching", ops, batches, db.commits)
	}
	if batches < 4 {
		t.Fatalf("%d batches for 64 ops with MaxBatch 16", batches)
	}
}

// A failing op fails alone: its neighbours in the batch are retried in
// their own transactions and committed.
func TestFailingOpFailsAlone(t *testing.T) {
	db := &fakeDB{}
	w := New[*fakeTx](db, Config{Window: 5 * time.Millisecond})
	defer w.Close()
	bad := errors.New("duplicate")
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() {
			errs[i] = w.Do(t.Context(), func(_ context.Context, tx *fakeTx) error {
				if i == 3 {
					return bad
				}
				tx.ops = append(tx.ops, i)
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == 3 && !errors.Is(err, bad):
			t.Errorf("op 3: err %v, want its own error", err)
		case i != 3 && (err != nil || !db.has(i)):
			t.Errorf("op %d: err %v, committed %v", i, err, db.has(i))
		}
	}
	if db.has(3) {
		t.Error("the failed op was committed")
	}
}

// A database that refuses transactions fails every write of the batch.
func TestBeginFailureFailsBatch(t *testing.T) {
	down := errors.New("connection refused")
	db := &fakeDB{failBegin: down}
	w := New[*fakeTx](db, Config{})
	defer w.Close()
	if err := w.Do(t.Context(), func(context.Context, *fakeTx) error { return nil }); !errors.Is(err, down) {
		t.Fatalf("err %v, want the Begin error", err)
	}
}

// Close commits what was queued and then refuses.
func TestClose(t *testing.T) {
	db := &fakeDB{}
	w := New[*fakeTx](db, Config{})
	if err := w.Do(t.Context(), func(_ context.Context, tx *fakeTx) error { tx.ops = append(tx.ops, 1); return nil }); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w.Close()
	if err := w.Do(t.Context(), func(context.Context, *fakeTx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

// burn spends CPU without blocking, as a handler between writes or a
// database commit does, so the scheduler cannot run anything else on the
// P meanwhile.
func burn(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// cpuDB is fakeDB whose commit costs CPU, like SQLite's on the writer's
// goroutine.
type cpuDB struct{ fakeDB }

func (d *cpuDB) Commit(ctx context.Context, tx *fakeTx) error {
	burn(50 * time.Microsecond)
	return d.fakeDB.Commit(ctx, tx)
}

// With one P and no window, writes of concurrent handlers share commits:
// the writer lets the runnable handlers queue their writes before it
// commits (gather). Without that, Do's wake-up handed the P straight to
// the writer and each write was committed alone.
func TestWindowlessBatchesOnOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	db := &cpuDB{}
	w := New[*fakeTx](db, Config{})
	defer w.Close()
	const handlers, writes = 16, 20
	var wg sync.WaitGroup
	for h := range handlers {
		wg.Go(func() {
			for i := range writes {
				burn(20 * time.Microsecond)
				if err := w.Do(t.Context(), func(_ context.Context, tx *fakeTx) error {
					tx.ops = append(tx.ops, h*writes+i)
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	batches, ops := w.Stats()
	if ops != handlers*writes {
		t.Fatalf("%d ops committed, want %d", ops, handlers*writes)
	}
	if per := float64(ops) / float64(batches); per < 4 {
		t.Fatalf("%d ops in %d batches (%.1f per commit); want the handlers' writes to share commits", ops, batches, per)
	}
}

// A rider joins the first write under its context, in the same
// transaction (one commit), and only that one; a failing rider fails the
// write it joined (both or neither).
func TestRider(t *testing.T) {
	db := &fakeDB{}
	w := New[*fakeTx](db, Config{})
	defer w.Close()
	write := func(n int) Op[*fakeTx] {
		return func(_ context.Context, tx *fakeTx) error { tx.ops = append(tx.ops, n); return nil }
	}
	ctx, r := w.WithRider(context.Background(), write(2))
	if r.Committed() {
		t.Fatal("committed before any write")
	}
	if err := w.Do(ctx, write(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Do(ctx, write(3)); err != nil {
		t.Fatal(err)
	}
	// Another writer's write leaves the rider to the next one of w.
	other := New[*fakeTx](&fakeDB{}, Config{})
	defer other.Close()
	ctx2, r2 := w.WithRider(context.Background(), write(5))
	if err := other.Do(ctx2, write(6)); err != nil || r2.Committed() {
		t.Fatalf("another writer took the rider: %v %v", err, r2.Committed())
	}
	db.mu.Lock()
	got, commits := fmt.Sprint(db.committed), db.commits
	db.mu.Unlock()
	if !r.Committed() || got != "[1 2 3]" || commits != 2 {
		t.Fatalf("committed %v; database %s in %d commits, want [1 2 3] in 2", r.Committed(), got, commits)
	}

	ctx, r = w.WithRider(context.Background(), func(context.Context, *fakeTx) error { return errors.New("refused") })
	if err := w.Do(ctx, write(4)); err == nil || r.Committed() || db.has(4) {
		t.Fatalf("a failing rider: err %v, committed %v, own write kept %v", err, r.Committed(), db.has(4))
	}
}

// conflictDB aborts the first commits it is asked for as a lost conflict
// (groupcommit.Conflict), keeping nothing of them.
type conflictDB struct {
	fakeDB
	conflicts int // commits still to abort
}

func (d *conflictDB) Commit(ctx context.Context, tx *fakeTx) error {
	d.mu.Lock()
	if d.conflicts > 0 {
		d.conflicts--
		d.mu.Unlock()
		return Conflict(errors.New("deadlock detected"))
	}
	d.mu.Unlock()
	return d.fakeDB.Commit(ctx, tx)
}

// A batch the database aborted to break a conflict is run again whole
// and its writes succeed, a lone write too; one that keeps losing fails
// with the database's error.
func TestConflictRunsTheBatchAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		writes    int
		conflicts int
		fail      bool
	}{
		{"Batch", 8, 2, false},
		{"Alone", 1, 1, false},
		{"KeepsLosing", 1, 1 + conflictRetries, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &conflictDB{conflicts: tc.conflicts}
			w := New[*fakeTx](db, Config{Window: 5 * time.Millisecond})
			defer w.Close()
			var wg sync.WaitGroup
			errs := make([]error, tc.writes)
			for i := range tc.writes {
				wg.Go(func() {
					errs[i] = w.Do(t.Context(), func(_ context.Context, tx *fakeTx) error {
						tx.ops = append(tx.ops, i)
						return nil
					})
				})
			}
			wg.Wait()
			for i, err := range errs {
				switch {
				case tc.fail && (err == nil || err.Error() != "deadlock detected" || db.has(i)):
					t.Errorf("write %d: err %v, committed %v; want the database's error", i, err, db.has(i))
				case !tc.fail && (err != nil || !db.has(i)):
					t.Errorf("write %d: err %v, committed %v", i, err, db.has(i))
				}
			}
			if !tc.fail && tc.writes > 1 {
				if batches, _ := w.Stats(); batches >= int64(tc.writes) {
					t.Errorf("%d writes committed in %d batches: retried alone, not whole", tc.writes, batches)
				}
			}
		})
	}
}
