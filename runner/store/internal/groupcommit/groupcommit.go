// Package groupcommit batches the writes of concurrent runs into one
// transaction, so that a store pays for durability (a WAL append and its
// locks in SQLite, a commit round trip and WAL flush in PostgreSQL) once per
// batch instead of once per request.
//
// Callers hand an Op to Writer.Do and block until the transaction holding it
// has committed (or failed): an acknowledged write is a committed write, so
// the service's promises (run row before the agent starts, terminal state
// before the reply's last byte) hold exactly as with one commit per write.
package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one caller's writes, run inside the batch's transaction. An Op that
// returns an error must have changed nothing it wants kept: the batch is
// rolled back and every Op of it is run again alone, in its own transaction,
// so one refused write (a duplicate id) never fails its neighbours.
type Op[Tx any] func(ctx context.Context, tx Tx) error

// Driver opens and ends the transactions of a Writer.
type Driver[Tx any] interface {
	Begin(ctx context.Context) (Tx, error)
	Commit(ctx context.Context, tx Tx) error
	Rollback(ctx context.Context, tx Tx)
}

// Config tunes a Writer.
type Config struct {
	// Window is how long the writer waits for more writes after the first
	// one of a batch arrived (0: it takes only what is already queued,
	// which still batches whatever arrived during the previous commit).
	Window time.Duration
	// MaxBatch flushes a batch early when it holds this many writes
	// (default 128).
	MaxBatch int
	// Timeout bounds one batch's transaction, so a database that stopped
	// answering fails the writes instead of holding them (default 10s).
	Timeout time.Duration
	// NoDeadline hands the driver and the writes a context that is never
	// done, and leaves Timeout unused: for a driver that bounds its own
	// waits (SQLite's busy_timeout bounds the wait for another process's
	// lock, the only wait a local file has). modernc's SQLite starts a
	// goroutine per statement, BEGIN and COMMIT to watch a context that
	// can end; at one connection those were 39% of the scheduler latency
	// in an execution trace of BenchmarkEndpoint/chat.
	NoDeadline bool
}

// ErrClosed is returned by Do after Close.
var ErrClosed = errors.New("groupcommit: writer closed")

// ErrStalled is returned, wrapping the driver's error, for the writes of a
// batch the database did not commit within Config.Timeout: it stopped
// answering (a lock held elsewhere, a connection gone), which is not the
// writes' fault.
var ErrStalled = errors.New("groupcommit: the database did not commit in time")

type request[Tx any] struct {
	op Op[Tx]
	// done receives the write's result, or errLead when its caller is to
	// commit the next batch (buffered: a commit never waits on a caller).
	done chan error
}

// errLead, on a waiting caller's done, hands it the next batch to commit.
var errLead = errors.New("groupcommit: lead the next batch")

// Writer commits batches, one at a time. There is no writer goroutine: the
// caller that finds no batch being committed commits one itself (the
// leader), and those arriving meanwhile queue and wait; when its commit
// is done the leader hands the queue to the first of them. At one
// connection a write is committed on its caller's goroutine with no
// hand-off to another goroutine and back (two wake-ups per write, each a
// futex call when the other P is idle). It is safe for concurrent use.
type Writer[Tx any] struct {
	drv Driver[Tx]
	cfg Config

	mu      sync.Mutex
	queue   []*request[Tx] // waiting for the next batch
	leading bool           // a batch is being committed (queue has its leader-to-be)
	closed  bool
	idle    chan struct{} // made by Close, closed when leading ends
	full    chan struct{} // a windowed leader's wake-up: the queue holds MaxBatch

	batch []*request[Tx] // the leader's batch, reused (one leader at a time)

	// observe, when set, is told each commit's duration and size.
	observe atomic.Pointer[func(time.Duration, int)]

	// Batches and Ops count what was committed (for tests and metrics).
	stats struct {
		sync.Mutex
		batches, ops int64
	}
}

// New returns a Writer.
func New[Tx any](drv Driver[Tx], cfg Config) *Writer[Tx] {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 128
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Writer[Tx]{
		drv: drv, cfg: cfg,
		batch: make([]*request[Tx], 0, cfg.MaxBatch),
		full:  make(chan struct{}, 1),
	}
}

var donePool = sync.Pool{New: func() any { return make(chan error, 1) }}

// Do runs op in the next batch and returns once that batch committed (nil)
// or failed. Queueing never waits, so ctx does not end the call: the
// caller must learn whether its write is durable. ctx carries the Rider.
//
// When ctx carries a Rider (WithRider) not yet taken, its op joins op:
// the two run in the same transaction, in that order, as one write.
func (w *Writer[Tx]) Do(ctx context.Context, op Op[Tx]) (err error) {
	if r, ok := ctx.Value(riderKey{}).(*Rider[Tx]); ok && r.w == w && r.taken.CompareAndSwap(false, true) {
		first := op
		op = func(ctx context.Context, tx Tx) error {
			if err := first(ctx, tx); err != nil {
				return err
			}
			return r.op(ctx, tx)
		}
		defer func() { r.committed.Store(err == nil) }()
	}
	done := donePool.Get().(chan error)
	defer donePool.Put(done)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.queue = append(w.queue, &request[Tx]{op: op, done: done})
	lead := !w.leading
	w.leading = true
	if !lead && len(w.queue) >= w.cfg.MaxBatch {
		select {
		case w.full <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	if lead {
		w.lead()
	}
	if err = <-done; err == errLead {
		w.lead()
		err = <-done
	}
	return err
}

// lead commits one batch of the queue, then hands the rest to the first
// caller still waiting, or ends the leading.
func (w *Writer[Tx]) lead() {
	if w.cfg.Window > 0 {
		w.wait()
	}
	batch := w.gather(w.batch[:0])
	w.commit(batch)
	clear(batch)
	w.batch = batch[:0]
	w.mu.Lock()
	if len(w.queue) > 0 {
		next := w.queue[0]
		w.mu.Unlock()
		next.done <- errLead
		return
	}
	w.leading = false
	if w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
	w.mu.Unlock()
}

// wait holds a windowed batch open for Config.Window, or until it is full.
func (w *Writer[Tx]) wait() {
	w.mu.Lock()
	n := len(w.queue)
	w.mu.Unlock()
	if n >= w.cfg.MaxBatch {
		return
	}
	select {
	case <-w.full:
	default:
	}
	t := time.NewTimer(w.cfg.Window)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.full:
	}
}

// Rider is a write that joins the next write made under a context that
// carries it, so that a caller can add its writes to one it does not make
// itself (the response history's to a run's start and terminal writes):
// one transaction, one commit, and both or neither kept (a batch that
// fails retries the joined write as one).
type Rider[Tx any] struct {
	w         *Writer[Tx]
	op        Op[Tx]
	taken     atomic.Bool
	committed atomic.Bool
}

type riderKey struct{}

// WithRider returns ctx carrying op as a Rider: the first Do of w under
// the returned context (or one derived from it) runs op after its own, in
// the same transaction. Another Writer's writes leave it alone.
func (w *Writer[Tx]) WithRider(ctx context.Context, op Op[Tx]) (context.Context, *Rider[Tx]) {
	r := &Rider[Tx]{w: w, op: op}
	return context.WithValue(ctx, riderKey{}, r), r
}

// Committed reports whether the rider was written: it joined a write and
// that write committed. Ask after the write under its context returned.
func (r *Rider[Tx]) Committed() bool { return r.committed.Load() }

// SetObserver makes the writer call fn after each commit with its
// duration and how many writes it carried.
func (w *Writer[Tx]) SetObserver(fn func(d time.Duration, writes int)) { w.observe.Store(&fn) }

// Stats returns how many batches and writes have been committed.
func (w *Writer[Tx]) Stats() (batches, ops int64) {
	w.stats.Lock()
	defer w.stats.Unlock()
	return w.stats.batches, w.stats.ops
}

// Close commits what is queued and then refuses writes.
func (w *Writer[Tx]) Close() {
	w.mu.Lock()
	w.closed = true
	if !w.leading {
		w.mu.Unlock()
		return
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	idle := w.idle
	w.mu.Unlock()
	<-idle
}

// maxYields bounds gather's rounds: each lets every goroutine that was
// runnable run up to its next blocking point, so a few rounds collect the
// writes of requests that were in flight, and the bound keeps a stream of
// newcomers from holding the batch open.
const maxYields = 4

// gather appends what is queued and what the goroutines that are ready to
// run are about to queue. Without it a batch held one write under load on
// a process with few Ps: a woken goroutine is the next to run on its P
// (the runtime hands the P straight to it), so a new leader committed its
// write before the other handlers, runnable but not yet run, could queue
// theirs (bench-edge at 32 connections: 1.1 writes per transaction, when
// a writer goroutine was woken the same way). runtime.Gosched lets them
// run first; when nothing else is runnable it returns at once, so a lone
// write (one connection) waits well under a microsecond, unlike a timer
// (Config.Window), which sleeps and is woken late on a loaded machine.
// Rounds stop as soon as one brings nothing new.
func (w *Writer[Tx]) gather(batch []*request[Tx]) []*request[Tx] {
	batch = w.drain(batch)
	for range maxYields {
		if len(batch) >= w.cfg.MaxBatch {
			break
		}
		n := len(batch)
		runtime.Gosched()
		if batch = w.drain(batch); len(batch) == n {
			break
		}
	}
	return batch
}

// drain moves what is queued into batch, up to MaxBatch.
func (w *Writer[Tx]) drain(batch []*request[Tx]) []*request[Tx] {
	w.mu.Lock()
	n := min(len(w.queue), w.cfg.MaxBatch-len(batch))
	batch = append(batch, w.queue[:n]...)
	rest := copy(w.queue, w.queue[n:])
	clear(w.queue[rest:])
	w.queue = w.queue[:rest]
	w.mu.Unlock()
	return batch
}

// commit runs batch in one transaction. When an Op fails, the whole
// transaction is rolled back and each Op is retried alone, so each caller
// gets its own Op's result.
func (w *Writer[Tx]) commit(batch []*request[Tx]) {
	began := time.Now()
	err := w.runAgain(batch)
	if err == nil {
		if fn := w.observe.Load(); fn != nil {
			(*fn)(time.Since(began), len(batch))
		}
		w.stats.Lock()
		w.stats.batches++
		w.stats.ops += int64(len(batch))
		w.stats.Unlock()
		for _, r := range batch {
			r.done <- nil
		}
		return
	}
	if len(batch) == 1 || !errors.Is(err, errOp) {
		// A failed Begin or Commit fails everyone: the database is the
		// problem, not one write.
		for _, r := range batch {
			r.done <- unwrapOp(err)
		}
		return
	}
	for _, r := range batch {
		err := w.runAgain([]*request[Tx]{r})
		if err == nil {
			w.stats.Lock()
			w.stats.batches++
			w.stats.ops++
			w.stats.Unlock()
		}
		r.done <- unwrapOp(err)
	}
}

// errOp marks an error returned by an Op (as opposed to Begin or Commit).
var errOp = errors.New("op failed")

type opError struct{ err error }

func (e opError) Error() string        { return e.err.Error() }
func (e opError) Is(target error) bool { return target == errOp }
func (e opError) Unwrap() error        { return e.err }

// OpFailed marks an error a Driver's Commit found to belong to one of the
// batch's writes rather than to the database (a driver that pipelines the
// writes learns their results only at Commit): the batch's writes are then
// retried alone, as when an Op itself fails.
func OpFailed(err error) error { return opError{err} }

func unwrapOp(err error) error {
	var oe opError
	if errors.As(err, &oe) {
		return oe.err
	}
	var ce conflictError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// errConflict marks an error a Driver's Commit found to be the database
// breaking a conflict with another transaction by aborting this one (a
// deadlock): nothing of the batch was kept and none of its writes is at
// fault, so the batch is run again whole.
var errConflict = errors.New("conflict")

type conflictError struct{ err error }

func (e conflictError) Error() string        { return e.err.Error() }
func (e conflictError) Is(target error) bool { return target == errConflict }
func (e conflictError) Unwrap() error        { return e.err }

// Conflict marks an error a Driver's Commit returns when the database
// aborted the batch's transaction to break a conflict with another
// (PostgreSQL's deadlock_detected): the batch is run again whole, up to
// conflictRetries times, before it is handled as any other failure.
func Conflict(err error) error { return conflictError{err} }

// conflictRetries bounds the runs again of a batch that lost a conflict:
// the other transaction went on when this one was aborted, so one more
// run almost always commits.
const conflictRetries = 3

// runAgain is run, again while the batch loses conflicts (Conflict).
func (w *Writer[Tx]) runAgain(batch []*request[Tx]) error {
	err := w.run(batch)
	for i := 0; i < conflictRetries && errors.Is(err, errConflict); i++ {
		err = w.run(batch)
	}
	return err
}

func (w *Writer[Tx]) run(batch []*request[Tx]) error {
	if w.cfg.NoDeadline {
		return w.runIn(context.Background(), batch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	err := w.runIn(ctx, batch)
	if err != nil && ctx.Err() != nil {
		// Out of time: the database's fault, not one write's (no retry
		// alone, which would wait as long again).
		return fmt.Errorf("%w: %w", ErrStalled, unwrapOp(err))
	}
	return err
}

func (w *Writer[Tx]) runIn(ctx context.Context, batch []*request[Tx]) error {
	tx, err := w.drv.Begin(ctx)
	if err != nil {
		return err
	}
	for _, r := range batch {
		if err := r.op(ctx, tx); err != nil {
			w.drv.Rollback(ctx, tx)
			return opError{err}
		}
	}
	return w.drv.Commit(ctx, tx)
}
