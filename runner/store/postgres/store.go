// Package postgres is the runner.Store for a fleet: several runedge hosts
// share one PostgreSQL database (pgx v5), so listing, reading and
// cancelling work from any host. Writes go through a group-commit writer
// (many runs' writes per transaction); reads use the pool; cancels reach
// the host running the run by LISTEN/NOTIFY.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/groupcommit"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// Options tune a Store; the zero value is the defaults.
type Options struct {
	// CommitWindow is how long the writer waits for more writes to join a
	// batch (0: only those already queued).
	CommitWindow time.Duration
	// CommitBatch is the largest batch (default 128).
	CommitBatch int
	// MaxConns bounds the pool (default 16): the writer holds one
	// connection per batch, the cancel listener one, readers the rest.
	MaxConns int32
	// Logger receives the warning of a connection that may go without TLS
	// and the start and end of each index build of an upgrade
	// (nil: none).
	Logger *slog.Logger
}

// DefaultCommitWindow is the group-commit window when none is configured:
// none (see the sqlite driver's and RATIONALE.md).
const DefaultCommitWindow = 0

// Store implements runner.Store and runner.CancelRelay on PostgreSQL.
type Store struct {
	pool   *pgxpool.Pool
	writer *groupcommit.Writer[*pipe]
	// pending keeps the hash of each running response's input for its
	// last write (itemref).
	pending itemref.Pending
	// requests keeps the hash state of recent recorded requests' inputs,
	// so a resent history is not hashed again (itemref.RequestCache).
	requests itemref.RequestCache
	// bases keeps the bases of recent requests, so that a resending
	// session's next turn skips the lookup (requests.go).
	bases baseCache
	// afterRequestLookup, set by tests only, runs between a request's
	// base lookup and its write (requests.go), told whether the base
	// came from bases.
	afterRequestLookup func(cached bool)
	// afterEmptyLocks, set by tests only, runs inside a purge's or a
	// response delete's transaction once it took its first locks
	// (lockRequests).
	afterEmptyLocks func(tx pgx.Tx)
}

var (
	_ runner.Store            = (*Store)(nil)
	_ runner.CancelRelay      = (*Store)(nil)
	_ runner.CommitObservable = (*Store)(nil)
)

// Open connects to dsn, checks that the database answers (a wrong
// password or an unreachable server fails here, at start) and brings the
// schema up to date; several hosts may do so at once.
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	cfg, err := parseDSN(dsn, os.Getenv("PGSSLMODE"))
	if err != nil {
		// pgx's parse errors quote the string; never echo a DSN, it may
		// hold a password.
		return nil, errors.New("runner/store/postgres: the DSN does not parse (want postgres://user@host:port/db or key=value pairs)")
	}
	if hosts := plaintextHosts(&cfg.ConnConfig.Config); len(hosts) > 0 && o.Logger != nil {
		o.Logger.Warn("store: PostgreSQL traffic to these hosts may be plaintext (sslmode disable, allow or prefer): set sslmode=verify-full",
			"hosts", hosts)
	}
	cfg.MaxConns = o.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("runner/store/postgres: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, wrap("cannot connect", err)
	}
	// Migrating may take long: an upgrade's index builds read every run,
	// and a host waits for another's to end.
	if err := migrate(ctx, pool, o.Logger); err != nil {
		pool.Close()
		return nil, fmt.Errorf("runner/store/postgres: migrate: %w", err)
	}
	s := &Store{pool: pool}
	s.writer = groupcommit.New[*pipe](txDriver{pool}, groupcommit.Config{Window: o.CommitWindow, MaxBatch: o.CommitBatch})
	return s, nil
}

// Close commits queued writes and closes the pool.
func (s *Store) Close() error {
	s.writer.Close()
	s.pool.Close()
	return nil
}

// SetCommitObserver reports each group commit (its duration and how many
// run writes it carried) to o (runner.CommitObservable).
func (s *Store) SetCommitObserver(o runner.CommitObserver) { s.writer.SetObserver(o.ObserveCommit) }

// CommitStats reports how many batches and writes the group-commit writer
// has committed.
func (s *Store) CommitStats() (batches, writes int64) { return s.writer.Stats() }

// pipe is a batch of writes sent to the server in one round trip: the
// statements of every write of a group commit, queued in a pgx.Batch and
// sent with one Sync, so they run as one implicit transaction (an error
// anywhere aborts them all, and the writer then retries each write alone).
// Refusals must therefore happen on the server, as statement errors (see
// insertRunNewSessionSQL); callbacks only read results (rows affected). Four to
// five round trips per request became one per batch.
type pipe struct {
	b pgx.Batch
	// sizes are the bytes of each queued statement's text and binary
	// arguments, and bytes their sum (splitBytes).
	sizes []int
	bytes int
}

// exec queues a statement whose result needs no check.
func (p *pipe) exec(sql string, args ...any) {
	p.b.Queue(sql, args...)
	p.sized(args)
}

// check queues a statement and a check of its result.
func (p *pipe) check(fn func(pgconn.CommandTag) error, sql string, args ...any) {
	p.b.Queue(sql, args...).Exec(fn)
	p.sized(args)
}

// sized records the bytes of the statement just queued.
func (p *pipe) sized(args []any) {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		}
	}
	p.sizes = append(p.sizes, n)
	p.bytes += n
}

// splitBytes bounds what one round trip of a group commit sends. pgx
// encodes a whole batch into its connection's write buffer, which grows by
// doubling and is dropped after the flush: nine agent-sized requests were
// about 2 MiB of buffer, and the halves before it, live while the batch
// was sent (RATIONALE.md "Bytes in flight"). A batch of more is sent in
// parts of about this size inside one explicit transaction on one
// connection: the same atomicity as one implicit transaction, a round trip
// more per part.
const splitBytes = 512 << 10

type txDriver struct{ pool *pgxpool.Pool }

func (d txDriver) Begin(context.Context) (*pipe, error) { return &pipe{}, nil }

func (d txDriver) Commit(ctx context.Context, p *pipe) error {
	if p.b.Len() == 0 {
		return nil
	}
	var err error
	if p.bytes > splitBytes && p.b.Len() > 1 {
		err = d.commitInParts(ctx, p)
	} else {
		err = d.pool.SendBatch(ctx, &p.b).Close()
	}
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == deadlockDetected {
		return groupcommit.Conflict(err) // nobody's fault: run again whole
	}
	if errors.As(err, &pe) && !connectionClass(pe) {
		return groupcommit.OpFailed(err) // one write's fault: retried alone
	}
	return err
}

// deadlockDetected is the SQLSTATE of a transaction PostgreSQL aborted
// to break a deadlock. The writes take their locks in one order with a
// purge's and a delete's (lockRequests), but two writes of one batch may
// still lock two rows a purge locks in the other order: such a batch is
// run again whole (groupcommit.Conflict), after the purge went on.
const deadlockDetected = "40P01"

// commitInParts sends p's statements in parts of about splitBytes, the
// first opening a transaction and the last committing it, on one
// connection. A part that fails rolls the transaction back; a connection
// left in an unknown state is closed, not returned to the pool.
func (d txDriver) commitInParts(ctx context.Context, p *pipe) (err error) {
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if _, rerr := c.Exec(rctx, "ROLLBACK"); rerr != nil {
				c.Conn().Close(rctx) // the pool drops a closed connection
			}
			cancel()
		}
		c.Release()
	}()
	q := p.b.QueuedQueries
	for start := 0; start < len(q); {
		var part pgx.Batch
		if start == 0 {
			part.Queue("BEGIN")
		}
		end, n := start, 0
		for end < len(q) && (end == start || n+p.sizes[end] <= splitBytes) {
			n += p.sizes[end]
			end++
		}
		part.QueuedQueries = append(part.QueuedQueries, q[start:end]...)
		if end == len(q) {
			part.Queue("COMMIT")
		}
		if err = c.SendBatch(ctx, &part).Close(); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (d txDriver) Rollback(context.Context, *pipe) {}

// inTx runs fn in a transaction of its own, again (up to three times
// more) when PostgreSQL aborted it to break a deadlock: for a purge or a
// delete, which a batch of writes may still meet in the other order
// (deadlockDetected).
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	for i := 0; ; i++ {
		err := pgx.BeginFunc(ctx, s.pool, fn)
		var pe *pgconn.PgError
		if i < 3 && errors.As(err, &pe) && pe.Code == deadlockDetected {
			continue
		}
		return err
	}
}

// connectionClass reports server errors that are about the server or the
// connection, not the statement.
func connectionClass(pe *pgconn.PgError) bool {
	return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "53" || pe.Code[:3] == "57P")
}

// wrap names the operation and says whether the database is the problem:
// a connection failure, a server shutting down or out of resources wraps
// runner.ErrUnavailable (503 unavailable to clients, who may retry); an
// error about the statement itself (a duplicate id) does not.
func wrap(op string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !connectionClass(pe) {
		return fmt.Errorf("runner/store/postgres: %s: %w", op, err)
	}
	return fmt.Errorf("%w: runner/store/postgres: %s: %w", runner.ErrUnavailable, op, err)
}

// notFound wraps runner.ErrNotFound with what was looked up.
func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %s", runner.ErrNotFound, what, id)
}
