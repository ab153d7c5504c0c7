package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// insertRunSQL writes a run; its fourth value, the session id, is the
// place where insertRunNewSessionSQL and insertRunInSessionSQL put their
// checks.
func insertRunSQL(session string) string {
	return `INSERT INTO runs (
		id, status, status_reason, session_id, thread_id,
		actor_id, actor_type, actor_name, tenant_id, endpoint, model,
		request_id, correlation_id, created_at, started_at, ended_at,
		input_tokens, output_tokens, total_tokens, error_code, error_message,
		request, output, attempts, duration_ms, ttft_ms, host_id, trace_id,
		lease_token, lease_expires
	) VALUES ($1, $2, $3, ` + session + `, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`
}

// Sessions and threads have no rows of their own (migration 7): a session
// or thread exists while a run of it does. A run that opens one checks, in
// its own statement, what a table's constraint used to: a new session's
// and thread's ids are not taken (by any tenant), an existing session is
// the tenant's. The statements run in a pipelined batch whose row counts
// arrive after it committed, so a failed check must fail on the server:
// the session id becomes NULL, which runs.session_id refuses (SQLSTATE
// 23502, see noSession), aborting the batch; group commit then retries
// its writes alone. Two concurrent starts could both pass a NOT EXISTS,
// but new ids are random and made by the runner, never by a client.
const (
	newSessionCheck = `CASE WHEN NOT EXISTS (SELECT 1 FROM runs WHERE session_id = $4)
		AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $5) THEN $4 END`
	inSessionCheck = `CASE WHEN EXISTS (SELECT 1 FROM runs WHERE session_id = $4 AND tenant_id = $9)
		AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $5) THEN $4 END`
)

var (
	insertRunPlainSQL      = insertRunSQL(`$4`)
	insertRunNewSessionSQL = insertRunSQL(newSessionCheck)
	insertRunInSessionSQL  = insertRunSQL(inSessionCheck)
)

const (
	getRunSQL         = `SELECT ` + runColumns + ` FROM runs WHERE id = $1`
	getRunOfTenantSQL = getRunSQL + ` AND tenant_id = $2`
)

// StartRun records a run, which opens its session and thread by naming
// them, as one write of the group-commit writer. newSession implies a new
// thread. A new session or thread whose id is taken is an error, a new
// thread in a session that is not the tenant's ErrNotFound.
func (s *Store) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	req := itemref.Elided(ctx, r)
	args, err := runArgs(r, req)
	if err != nil {
		return err
	}
	which := 0 // plain, new session, in session
	switch {
	case newSession:
		which = 1
	case newThread:
		which = 2
	}
	insert := [...]string{insertRunPlainSQL, insertRunNewSessionSQL, insertRunInSessionSQL}[which]
	// One of runner.SharedRequestMin bytes or more with its input's
	// bounds may be kept by reference to an earlier run's (requests.go).
	var hashes [][]byte
	var lens []int
	if itemref.SharesRequest(r, req) {
		hashes, lens = s.requests.RequestPrefixes(r.TenantID, req, r.RequestBounds)
	}
	if hashes != nil {
		err = s.startShared(ctx, r, req, args, which, hashes, lens)
	} else {
		err = s.writeRun(ctx, r, insert, args)
	}
	if err != nil {
		if noSession(err) {
			if newSession {
				return fmt.Errorf("%w: session %s", runner.ErrSessionExists, r.SessionID)
			}
			return notFound("session", r.SessionID)
		}
		return wrap("start run "+r.ID, err)
	}
	return nil
}

// startShared writes run r, whose request req may be kept by reference
// to the base of one of hashes (their prefixes lens bytes long, the
// longest first): the write carries only the bytes past the base's. The
// base comes from the host's memory of recent ones (s.bases), else from
// the database. A base emptied since is refused by the insert (baseGone):
// one the memory gave is forgotten and the database asked, and when the
// database's went too the run is written whole.
func (s *Store) startShared(ctx context.Context, r *runner.Run, req []byte, args []any, which int, hashes [][]byte, lens []int) error {
	b, cached := s.bases.find(r.TenantID, hashes, lens)
	for {
		if !cached {
			var err error
			if b.id, b.prefix, b.depth, err = s.findRequestBase(ctx, r.TenantID, hashes); err != nil {
				return err
			}
			s.bases.keepFound(r.TenantID, hashes, lens, b)
		}
		if s.afterRequestLookup != nil {
			s.afterRequestLookup(cached)
		}
		if b.id == "" || b.depth+1 >= itemref.RequestDepth || b.prefix <= 0 || b.prefix > len(req) {
			break
		}
		tail := append([]any(nil), args...)
		tail[requestArg] = req[b.prefix:]
		tail = append(tail, b.id, b.prefix, b.depth+1, hashes[0], lens[0])
		err := s.writeRun(ctx, r, [...]string{insertRunTailPlainSQL, insertRunTailNewSessionSQL, insertRunTailInSessionSQL}[which], tail)
		if !baseGone(err) {
			if err == nil {
				s.bases.keep(r.TenantID, hashes[0], requestBase{r.ID, lens[0], b.depth + 1})
			}
			return err
		}
		s.bases.forget(r.TenantID, b.id)
		if !cached {
			break
		}
		cached = false
	}
	whole := append(args[:len(args):len(args)], hashes[0], lens[0])
	err := s.writeRun(ctx, r, [...]string{insertRunIndexedPlainSQL, insertRunIndexedNewSessionSQL, insertRunIndexedInSessionSQL}[which], whole)
	if err == nil {
		s.bases.keep(r.TenantID, hashes[0], requestBase{r.ID, lens[0], 0})
	}
	return err
}

// writeRun queues run r's insert, sql with args (runArgs' values first),
// on the group-commit writer and waits for its batch's commit. A lease
// counted from the write (Run.LeaseFor) gets its expiry as the writer puts
// the insert in its batch (again if a failed batch makes it run alone), by
// the host's clock, and r.LeaseExpiresAt is set to it once the batch
// committed: a start that waited in the writer's queue still commits a
// lease that has not run out.
func (s *Store) writeRun(ctx context.Context, r *runner.Run, sql string, args []any) error {
	leaseFor := r.LeaseFor
	err := s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
		if leaseFor > 0 {
			args[leaseArg] = time.Now().Add(leaseFor).UnixMilli()
		}
		p.exec(sql, args...)
		return nil
	})
	if err == nil && leaseFor > 0 {
		r.LeaseExpiresAt = args[leaseArg].(int64)
	}
	return err
}

// requestArg is the index of the recorded request in runArgs' values
// ($22), leaseArg that of the lease's expiry ($30).
const (
	requestArg = 21
	leaseArg   = 29
)

func runArgs(r *runner.Run, req []byte) ([]any, error) {
	if r.Status != runner.StatusQueued && r.Status != runner.StatusRunning {
		return nil, fmt.Errorf("%w: a run is created queued or running, not %q", runner.ErrInvalidTransition, r.Status)
	}
	in, out, total := usageArgs(r.Usage)
	code, msg := errorArgs(r.Error)
	// The request as bytes, not a string: pgx encodes either into the
	// batch, and a string would be one more copy of an agent-sized body
	// alive until the commit.
	var request any
	if len(req) > 0 {
		request = req
	}
	return []any{
		r.ID, string(r.Status), r.StatusReason, r.SessionID, r.ThreadID,
		r.Actor.ID, r.Actor.Type, r.Actor.Name, r.TenantID, r.Endpoint, r.Model,
		r.RequestID, r.CorrelationID, r.CreatedAt, nullableInt(r.StartedAt), nullableInt(r.EndedAt),
		in, out, total, code, msg, request, r.Output, int64(r.Attempts),
		nullableInt(r.DurationMs), nullableInt(r.TimeToFirstTokenMs), r.HostID, r.TraceID,
		r.LeaseToken, leaseExpiresArg(r),
	}, nil
}

// GetRun returns one run; tenantID "" means any tenant (admin).
func (s *Store) GetRun(ctx context.Context, tenantID, id string) (runner.Run, error) {
	var row pgx.Row
	if tenantID == "" {
		row = s.pool.QueryRow(ctx, getRunSQL, id)
	} else {
		row = s.pool.QueryRow(ctx, getRunOfTenantSQL, id, tenantID)
	}
	r, err := scanRun(row)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return runner.Run{}, notFound("run", id)
	case err != nil:
		return runner.Run{}, wrap("get run "+id, err)
	}
	if err := s.inflate(ctx, &r); err != nil {
		return runner.Run{}, wrap("get run "+id, err)
	}
	return r, nil
}

const interruptedMessage = "the runner stopped before the run finished"

// MarkInterrupted fails the queued or running runs of host hostID (and
// those recorded without a host) with reason interrupted; other hosts'
// runs are live and left alone.
//
// It takes no lease token, and needs none to be safe against a takeover:
// the host is its fence. A takeover (AcquireExpired) makes a run the
// taker's (host_id) in the same write that gives it its new token, and
// this is one UPDATE whose WHERE PostgreSQL checks again on the row as a
// concurrent takeover left it (READ COMMITTED re-reads a row it waited
// for), while the takeover skips a row this has locked and then finds it
// failed. So each run is either taken or marked, never both
// (storetest "RecoverLeavesTakenRuns"). What it does not guard against is
// being aimed at a host that is alive: no service calls it (a host with a
// lease store recovers by AcquireExpired), only `runedge runs recover
// --host`, for a host that will not come back; a live host's run it
// failed refuses that host's later end, the first terminal write winning.
func (s *Store) MarkInterrupted(ctx context.Context, hostID string, at int64) (int64, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE runs
		SET status = $1, status_reason = $2, ended_at = $3, error_code = $2, error_message = $4
		WHERE status IN ('queued', 'running') AND host_id IN ($5, '')`,
		string(runner.StatusFailed), runner.ReasonInterrupted, at, interruptedMessage, hostID)
	if err != nil {
		return 0, wrap("mark interrupted", err)
	}
	return tag.RowsAffected(), nil
}

// PurgeBefore empties request and output of runs that ended before the
// cutoff (store.retention) and forgets what the response history kept of
// them (items, final object, stored stream events); the rows stay.
func (s *Store) PurgeBefore(ctx context.Context, before int64) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		const old = `SELECT id FROM runs WHERE ended_at < $1`
		// The runs' rows first, then the responses' (lockRequests).
		if err := lockRequests(ctx, tx, old, before); err != nil {
			return err
		}
		if s.afterEmptyLocks != nil {
			s.afterEmptyLocks(tx)
		}
		rows, err := tx.Query(ctx, `UPDATE responses SET forgotten = TRUE, prefix_hash = NULL, input_hash = NULL WHERE NOT forgotten AND run_id IN (`+old+`)
			RETURNING run_id`, before)
		if err != nil {
			return err
		}
		forget, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM run_events WHERE run_id IN (` + old + `)`,
			`UPDATE responses SET object = '' WHERE object <> '' AND run_id IN (` + old + `)`,
		} {
			if _, err := tx.Exec(ctx, q, before); err != nil {
				return err
			}
		}
		// A purged response's items go, but for those a newer response
		// shares (release).
		for _, id := range forget {
			if err := release(ctx, tx, id); err != nil {
				return err
			}
		}
		// A younger run's request kept by reference to a purged one is
		// written whole first (dropRequests).
		n, err = dropRequests(ctx, tx, old, before)
		return err
	})
	if err != nil {
		return 0, wrap("purge", err)
	}
	return n, nil
}
