package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stuckDB is a database whose writes never finish: each op waits out the
// batch's context, as a write waiting on a lock held elsewhere does.
type stuckDB struct {
	fakeDB
	begins atomic.Int32
}

func (d *stuckDB) Begin(ctx context.Context) (*fakeTx, error) {
	d.begins.Add(1)
	return d.fakeDB.Begin(ctx)
}

// A batch the database does not commit within Timeout fails every write
// with ErrStalled (the database's fault, which a store reports as an
// outage), at once: its writes are not retried alone, each waiting as
// long again.
func TestStalledBatchFailsAtOnce(t *testing.T) {
	db := &stuckDB{}
	w := New[*fakeTx](db, Config{Window: 20 * time.Millisecond, Timeout: 50 * time.Millisecond})
	defer w.Close()
	stuck := func(ctx context.Context, _ *fakeTx) error { <-ctx.Done(); return ctx.Err() }
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = w.Do(t.Context(), stuck) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrStalled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("write %d: err %v, want ErrStalled wrapping the driver's error", i, err)
		}
	}
	// The transactions are the measure: writes retried alone would each
	// begin one more, and wait Timeout again (a wall-clock bound on the
	// whole would depend on the machine's load).
	if n := db.begins.Load(); n > 2 {
		t.Errorf("%d transactions for 4 stalled writes: they were retried alone", n)
	}
}
