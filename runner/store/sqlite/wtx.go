package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/runedge/runedge/runner/store/internal/groupcommit"
	"modernc.org/sqlite"
)

// wtx is a write transaction on the writer connection, driven as plain
// statements (BEGIN IMMEDIATE … COMMIT) on the writer's one connection,
// held for the Store's life, instead of through database/sql's Tx. A Tx
// starts a goroutine per transaction to watch its context and wakes it at
// Commit, and wraps each prepared statement anew per use
// (Tx.StmtContext); at one connection the watcher's wake-ups were 40% of
// the scheduler latency left in an execution trace of
// BenchmarkEndpoint/chat. SQLite keeps a transaction per connection, and
// the pool has exactly one (SetMaxOpenConns(1)), which the Store holds as
// a *sql.Conn, so the statements between BEGIN and COMMIT are the
// transaction's. Everything that writes on that connection holds mu for
// its whole transaction, so no other statement slips into it.
//
// BEGIN IMMEDIATE, COMMIT and ROLLBACK are statements prepared at Open
// (stmts.go), like the writes between them: given as text, modernc
// compiled and finalized each of them every transaction. They run through
// the driver (rawexec.go).
type wtx struct {
	c  *sql.Conn // the writer pool's one connection
	mu *sync.Mutex
	st *stmts
	// tail is set by the checkpointer after each of its checkpoints: the
	// next transaction first copies what was appended meanwhile, so that
	// the log can start over (checkpoint.go).
	tail atomic.Bool
}

// ExecContext runs query inside the transaction.
func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.c.ExecContext(ctx, query, args...)
}

// QueryRowContext reads inside the transaction.
func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.c.QueryRowContext(ctx, query, args...)
}

// StmtContext returns st, prepared on the writer connection: inside the
// transaction as it is (the name and shape of sql.Tx's).
func (t *wtx) StmtContext(_ context.Context, st *sql.Stmt) *sql.Stmt { return st }

// begin takes the writer connection for a transaction and opens it; the
// write lock is taken at BEGIN (IMMEDIATE), so two writers never deadlock
// upgrading a read lock.
func (t *wtx) begin(ctx context.Context) error {
	t.mu.Lock()
	if t.tail.Swap(false) {
		// Outside a transaction, on the connection that appends, so the
		// checkpoint ends with the log wholly copied and this BEGIN's
		// transaction starts it over. PASSIVE never waits: if the
		// checkpointer holds the checkpoint lock again, it is BUSY, and
		// the log starts over after a later one.
		if t.sharedFile() {
			t.restartTail(ctx)
		} else {
			var busy, log, done int
			t.c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
		}
		tailCopies.Add(1)
	}
	if _, err := t.exec(ctx, t.st.begin); err != nil {
		t.mu.Unlock()
		return err
	}
	return nil
}

// tailCopies counts the writers' copies of the tail done (begin), busy
// or not: the tests' measure of how soon the log starts over, which, unlike
// a count of runs, does not depend on how often a loaded machine lets the
// ticks and the writer run.
var tailCopies atomic.Int64

// persistWALShared is the bit the writer's file sets in its answer to a
// SQLITE_FCNTL_PERSIST_WAL query when another writer (another host)
// shares the file (walvfs.go, dbFileControl); never set where the
// writer's VFS is not registered.
const persistWALShared = 2

// sharedFile asks the writer's file whether another writer shares it;
// the query also lets the kept read lock go (walvfs.go).
func (t *wtx) sharedFile() bool {
	shared := false
	t.c.Raw(func(dc any) error {
		if fc, ok := dc.(sqlite.FileControl); ok {
			v, err := fc.FileControlPersistWAL("main", -1)
			shared = err == nil && v >= 0 && v&persistWALShared != 0
		}
		return nil
	})
	return shared
}

// tailBusyMS bounds, in ms, restartTail's wait for the other host's
// transaction and for readers: this host's writes wait behind it.
const tailBusyMS = 250

// restartTail copies the tail of a log another host appends to as well.
// A PASSIVE copy between this writer's batches cannot stop the other
// host appending before this writer's next BEGIN, so under steady writes
// from both the log was seldom wholly copied when a write began, and
// never started over. A RESTART checkpoint holds the write lock while it
// copies the tail (the bulk was copied by the checkpointer's PASSIVE one)
// and until no reader uses the log: whichever host writes next starts
// the log over. Its waits use the busy handler, bounded here by
// tailBusyMS instead of busy_timeout: past it the checkpoint gives up
// (busy), and a later tick tries again.
func (t *wtx) restartTail(ctx context.Context) {
	var busy, log, done int
	t.c.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(tailBusyMS))
	t.c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &log, &done)
	t.c.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = "+strconv.Itoa(busyTimeoutMS))
}

// releaseReadLock lets go the read lock the writer keeps from one
// transaction to the next (walvfs.go), so that a checkpoint can copy the
// whole log: at once when wait, else only if no transaction is open (the
// checkpointer's tick, which must not wait for the writer).
func (t *wtx) releaseReadLock(wait bool) {
	if wait {
		t.mu.Lock()
	} else if !t.mu.TryLock() {
		return
	}
	defer t.mu.Unlock()
	t.c.Raw(func(dc any) error {
		if fc, ok := dc.(sqlite.FileControl); ok {
			fc.FileControlPersistWAL("main", -1) // a query: walvfs.go's signal
		}
		return nil
	})
}

// commit commits the transaction and gives the connection back. A COMMIT
// that failed leaves the transaction open (SQLITE_BUSY) or already rolled
// back; the ROLLBACK ends the first and fails harmlessly on the second.
func (t *wtx) commit(ctx context.Context) error {
	defer t.mu.Unlock()
	_, err := t.exec(ctx, t.st.commit)
	if err != nil {
		t.exec(context.WithoutCancel(ctx), t.st.rollback)
	}
	return err
}

// rollback rolls the transaction back and gives the connection back.
func (t *wtx) rollback(ctx context.Context) {
	defer t.mu.Unlock()
	t.exec(context.WithoutCancel(ctx), t.st.rollback)
}

// ownTx runs op in a transaction of its own on the write connection,
// outside the group commit, with no bound but ctx's.
func (s *Store) ownTx(ctx context.Context, op groupcommit.Op[*wtx]) error {
	if err := s.wt.begin(ctx); err != nil {
		return err
	}
	if err := op(ctx, s.wt); err != nil {
		s.wt.rollback(ctx)
		return err
	}
	return s.wt.commit(ctx)
}

// txDriver runs the group commit's transactions on the writer connection.
type txDriver struct{ t *wtx }

func (d txDriver) Begin(ctx context.Context) (*wtx, error)  { return d.t, d.t.begin(ctx) }
func (d txDriver) Commit(ctx context.Context, t *wtx) error { return t.commit(ctx) }
func (d txDriver) Rollback(ctx context.Context, t *wtx)     { t.rollback(ctx) }
