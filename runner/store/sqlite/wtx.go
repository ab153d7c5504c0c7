package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
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
	nv []driver.NamedValue // exec's arguments, reused under mu
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
		var busy, log, done int
		t.c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
	}
	if _, err := t.exec(ctx, t.st.begin); err != nil {
		t.mu.Unlock()
		return err
	}
	return nil
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
