package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// StartRun records a run, which opens its session and thread by naming
// them (migration 7: they have no rows of their own), as one write of the
// group-commit writer: it shares its transaction (one WAL append, one
// round of file locks) with the writes of concurrent runs. newSession
// implies a new thread. A new session or thread whose id is taken is an
// error, a new thread in a session that is not the tenant's ErrNotFound;
// continuing a thread adds nothing to check (ThreadSession found it).
func (s *Store) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) (err error) {
	defer outage(&err)
	ins, check := s.insertOf(r, newSession, newThread)
	// A request over s.apart bytes is a row of its own (migration 14),
	// which the run's end leaves alone; a smaller one stays in the run's
	// row, where it costs no page of another B-tree.
	// One of runner.SharedRequestMin bytes or more with its input's
	// bounds is kept by reference to an earlier run's when it can
	// (requests.go), and is always a row of its own.
	var inline, apart any
	var shared *sharedRequest
	req := itemref.Elided(ctx, r)
	if itemref.SharesRequest(r, req) {
		if hashes, lens := s.requests.RequestPrefixes(r.TenantID, req, r.RequestBounds); hashes != nil {
			shared = &sharedRequest{req, hashes, lens}
		}
	}
	// Bound as text without a copy (an agent-sized request was copied
	// twice, here and by the driver into SQLite's memory as it binds):
	// tx.exec keeps no argument, and req outlives the write.
	text := unsafe.String(unsafe.SliceData(req), len(req))
	switch {
	case shared != nil:
	case len(req) > s.apart:
		apart = text
	case len(req) > 0:
		inline = text
	}
	// Do runs the write before it returns, and nothing keeps its
	// arguments after (the driver binds copies): the slice goes back.
	pooled := getArgs()
	defer putArgs(pooled)
	args, err := runArgs(*pooled, r, inline, fresh(r), check...)
	if err != nil {
		return err
	}
	*pooled = args
	mark := !s.marks.isMarked(r.HostID) // the host's first run here: give it a mark
	added := false
	err = s.writer.Do(ctx, func(ctx context.Context, tx *wtx) error {
		// A lease counted from the write (Run.LeaseFor) gets its expiry
		// as the write executes: lease_expires is the insert's last
		// value. (r.LeaseFor, not a copy captured: that took the closure
		// to the next size class, 16 bytes more per run.)
		if r.LeaseFor > 0 {
			args[len(args)-1] = leaseFromNow(r.LeaseFor)
		}
		res, err := tx.exec(ctx, ins, args...)
		if err != nil {
			return err
		}
		if newThread {
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return s.refused(ctx, tx, r, newSession)
			}
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return err
		}
		s.marks.add(r.ID, r.HostID, seq)
		added = true
		switch {
		case shared != nil:
			if err := s.writeRequest(ctx, tx, seq, r.TenantID, shared); err != nil {
				return err
			}
		case apart != nil:
			if _, err := tx.exec(ctx, s.st.insertRequest, seq, apart); err != nil {
				return err
			}
		}
		if mark {
			_, err = tx.ExecContext(ctx, insertMarkSQL, r.HostID, seq)
		}
		return err
	})
	switch {
	case err != nil && added:
		s.marks.remove(r.ID) // its insert did not commit
	case err == nil && mark:
		s.marks.setMarked(r.HostID)
	}
	if err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return err
		}
		return fmt.Errorf("runner/store/sqlite: start run %s: %w", r.ID, err)
	}
	if r.LeaseFor > 0 {
		r.LeaseExpiresAt = args[len(args)-1].(int64)
	}
	return nil
}

// refused says why a checked insert (OR IGNORE) wrote nothing: a check
// refused it, or the run id is taken (OR IGNORE skipped that too, see
// insertRunCheckedSQL). It reads inside the transaction, on that rare
// path only.
func (s *Store) refused(ctx context.Context, tx *wtx, r *runner.Run, newSession bool) error {
	var taken bool
	if err := tx.QueryRowContext(ctx, runExistsSQL, r.ID).Scan(&taken); err != nil {
		return err
	}
	switch {
	case taken:
		return fmt.Errorf("run %s exists already", r.ID)
	case newSession:
		return fmt.Errorf("%w: session %s or thread %s", runner.ErrSessionExists, r.SessionID, r.ThreadID)
	}
	return notFound("session", r.SessionID)
}

// insertOf returns StartRun's insert and its check's parameters (none
// for a run in a known thread), in the order stmts.go gives them.
// A fresh run (fresh) gets the same insert with freshRunValues' literals.
func (s *Store) insertOf(r *runner.Run, newSession, newThread bool) (*rawStmt, []any) {
	f := fresh(r)
	switch {
	case newSession:
		st := s.st.insertRunNewSession
		if f {
			st = s.st.insertFreshRunNewSession
		}
		return st, []any{contract.OpenerID(r.SessionID), r.SessionID, r.SessionID,
			contract.OpenerID(r.ThreadID), r.ThreadID, r.ThreadID}
	case newThread:
		st := s.st.insertRunInSession
		if f {
			st = s.st.insertFreshRunInSession
		}
		return st, []any{contract.OpenerID(r.SessionID), r.SessionID, r.TenantID, r.SessionID, r.TenantID,
			contract.OpenerID(r.ThreadID), r.ThreadID, r.ThreadID}
	case f:
		return s.st.insertFreshRun, nil
	}
	return s.st.insertRun, nil
}

// runArgs checks that r may be created and returns the insert's
// arguments: insertRunSQL's, with check's parameters before the session
// id's (THEN ?), as in insertRunCheckedSQL's text; for a fresh run
// (fresh), without the values its insert writes as literals
// (freshRunValues). modernc does not count them (its NumInput is -1): a
// missing one binds NULL and refuses every run. One slice for both: a
// copy with the check was half a kilobyte per run. They are appended to
// args.
func runArgs(args []any, r *runner.Run, request any, fresh bool, check ...any) ([]any, error) {
	if r.Status != runner.StatusQueued && r.Status != runner.StatusRunning {
		return nil, fmt.Errorf("%w: a run is created queued or running, not %q", runner.ErrInvalidTransition, r.Status)
	}
	if fresh {
		args = append(append(args, r.ID, statusArg(r.Status)), check...)
		return append(args, r.SessionID, r.ThreadID,
			r.Actor.ID, r.Actor.Type, r.Actor.Name, r.TenantID, r.Endpoint, r.Model,
			r.RequestID, r.CorrelationID, r.CreatedAt, nullableInt(r.StartedAt),
			request, r.HostID, r.TraceID, r.LeaseToken, leaseExpiresArg(r),
		), nil
	}
	in, out, total := usageArgs(r.Usage)
	code, msg := errorArgs(r.Error)
	args = append(append(args, r.ID, statusArg(r.Status), r.StatusReason), check...)
	return append(args, r.SessionID, r.ThreadID,
		r.Actor.ID, r.Actor.Type, r.Actor.Name, r.TenantID, r.Endpoint, r.Model,
		r.RequestID, r.CorrelationID, r.CreatedAt, nullableInt(r.StartedAt), nullableInt(r.EndedAt),
		in, out, total, code, msg, request, r.Output, int64(r.Attempts),
		nullableInt(r.DurationMs), nullableInt(r.TimeToFirstTokenMs), r.HostID, r.TraceID,
		r.LeaseToken, leaseExpiresArg(r),
	), nil
}

// fresh reports whether r holds none of the values freshRunValues writes
// as literals: no reason, end, usage, error, output, attempts nor
// durations, as every run Service.Start makes.
func fresh(r *runner.Run) bool {
	return r.StatusReason == "" && r.EndedAt == nil && r.Usage == nil && r.Error == nil &&
		r.Output == "" && r.Attempts == 0 && r.DurationMs == nil && r.TimeToFirstTokenMs == nil
}

// argSlices holds the argument slices of a run's insert and end, given
// back once their write is done: two slices of about 30 values (470 and
// 310 bytes) per run that were allocated for one statement each.
var argSlices = sync.Pool{New: func() any { return new([]any) }}

// getArgs returns an empty argument slice from argSlices.
func getArgs() *[]any {
	p := argSlices.Get().(*[]any)
	*p = (*p)[:0]
	return p
}

// putArgs gives p back to argSlices once no statement uses its values; a
// slice grown past argsKept values is let go.
func putArgs(p *[]any) {
	const argsKept = 64
	if cap(*p) > argsKept {
		return
	}
	clear((*p)[:cap(*p)]) // nothing of a run stays reachable from the pool
	*p = (*p)[:0]
	argSlices.Put(p)
}

// GetRun returns one run; tenantID "" means any tenant (admin).
func (s *Store) GetRun(ctx context.Context, tenantID, id string) (_ runner.Run, err error) {
	defer outage(&err)
	var row *sql.Row
	if tenantID == "" {
		row = s.st.getRun.QueryRowContext(ctx, id)
	} else {
		row = s.st.getRunOfTenant.QueryRowContext(ctx, id, tenantID)
	}
	r, err := scanRun(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return runner.Run{}, notFound("run", id)
	case err != nil:
		return runner.Run{}, fmt.Errorf("runner/store/sqlite: get run %s: %w", id, err)
	}
	if err := s.inflate(ctx, &r); err != nil {
		return runner.Run{}, fmt.Errorf("runner/store/sqlite: get run %s: %w", id, err)
	}
	return r, nil
}

// interruptedMessage is recorded on runs a crash left unfinished.
const interruptedMessage = "the runner stopped before the run finished"

// MarkInterrupted fails the queued or running runs of host hostID (and
// those recorded before runs had hosts) with reason interrupted. It runs
// at start-up, before any run of this process exists, so every such run
// belongs to a process that is gone. Waiting runs are left alone: they are
// paused on purpose and can still be resumed or cancelled. It scans the
// runs from the hosts' low-water mark (marks.go), in one transaction
// outside the group commit that also moves the marks past the last run,
// and from then on this Store raises hostID's mark as its runs end.
func (s *Store) MarkInterrupted(ctx context.Context, hostID string, at int64) (_ int64, err error) {
	defer outage(&err)
	var n int64
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		var low sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(low_seq) FROM live_marks WHERE host_id IN (?, '')`, hostID).Scan(&low); err != nil {
			return err
		}
		if low.Valid { // no row: neither host ever had a live run
			// The statuses are literals, as in the index this scan replaced.
			res, err := tx.ExecContext(ctx, `UPDATE runs
				SET status = ?, status_reason = ?, ended_at = ?, error_code = ?, error_message = ?
				WHERE seq >= ? AND status IN ('queued', 'running') AND host_id IN (?, '')`,
				runner.StatusFailed, runner.ReasonInterrupted, at, runner.ReasonInterrupted, interruptedMessage, low.Int64, hostID)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil {
				return err
			}
		}
		// Neither host has a live run now: both marks go past the last
		// run, and hostID gets a row if it had none (own).
		if _, err := tx.ExecContext(ctx, `INSERT INTO live_marks (host_id, low_seq)
			VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs))
			ON CONFLICT (host_id) DO UPDATE SET low_seq = excluded.low_seq`, hostID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE live_marks SET low_seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs)
			WHERE host_id = ''`)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("runner/store/sqlite: mark interrupted: %w", err)
	}
	s.marks.own(hostID)
	return n, nil
}

// purgeChunk is how many runs one of PurgeBefore's transactions walks at
// most: the writer is held for one chunk at a time.
const purgeChunk = 256

// PurgeBefore empties the request and output of runs that ended before
// the Unix time before (store.retention), and forgets what the response
// history kept of them (input and output items, the final object, stored
// stream events). A background job, it writes outside the group commit,
// in transactions of its own on the writer connection, each over at most
// purgeChunk runs.
//
// It walks runs by seq (a range of the table's own B-tree; ended_at has
// no index) from the mark (purge_mark), below which every run ended and
// was purged, and moves the mark to the lowest seq
// walked that is not purged (not ended, or ended at or after the
// cutoff): a run still running holds it and is purged by the first purge
// after it ends. The walk stops at the first run created at or after the
// cutoff: no run created later can have ended before it, so a purge reads
// the runs since the last one (and those a live run holds behind the
// mark), not every run ever made. A run that ended before its creation (a
// clock stepped back between hosts) is left to the first purge whose
// cutoff passes its creation; the mark never passes it.
func (s *Store) PurgeBefore(ctx context.Context, before int64) (_ int64, err error) {
	defer outage(&err)
	var (
		total int64
		from  int64 = -1 // the next seq to walk; -1 until the mark is read
		held  bool       // a run walked is not purged: the mark stays at it
		done  bool
	)
	for !done {
		err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
			if from < 0 {
				if err := tx.QueryRowContext(ctx, `SELECT low_seq FROM purge_mark WHERE id = 1`).Scan(&from); err != nil {
					return err
				}
			}
			lo, hi, mark := from, from-1, int64(-1)
			rows, err := tx.c.QueryContext(ctx, `SELECT seq, ended_at, created_at FROM runs WHERE seq >= ? ORDER BY seq LIMIT ?`, from, purgeChunk)
			if err != nil {
				return err
			}
			walked := 0
			for rows.Next() {
				var seq, created int64
				var ended sql.NullInt64
				if err := rows.Scan(&seq, &ended, &created); err != nil {
					rows.Close()
					return err
				}
				if created >= before {
					// Neither this run nor, clocks agreeing, any after it
					// (seq follows creation) can have ended before the
					// cutoff: the walk ends. One that did, on a host whose
					// clock was behind, waits for a later purge: the mark
					// stays below it.
					walked = -1
					break
				}
				walked++
				hi = seq
				if !held && (!ended.Valid || ended.Int64 >= before) {
					mark, held = seq, true
				}
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if walked < purgeChunk { // the last run, or the first created after the cutoff
				done = true
			}
			if !held {
				mark = hi + 1
			}
			if hi >= lo {
				n, err := purgeRange(ctx, tx, lo, hi, before)
				if err != nil {
					return err
				}
				total += n
			}
			if mark >= 0 {
				if _, err := tx.ExecContext(ctx, `UPDATE purge_mark SET low_seq = ? WHERE id = 1`, mark); err != nil {
					return err
				}
			}
			from = hi + 1
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("runner/store/sqlite: purge: %w", err)
		}
	}
	return total, nil
}

// purgeRange purges the runs whose seq is in [lo, hi] and that ended
// before the Unix time before, and returns how many of them held a
// request or output.
func purgeRange(ctx context.Context, tx *wtx, lo, hi, before int64) (int64, error) {
	const old = `SELECT id FROM runs WHERE seq BETWEEN ? AND ? AND ended_at < ?`
	var forget []string
	rows, err := tx.c.QueryContext(ctx, `SELECT run_id FROM responses WHERE forgotten = 0 AND run_id IN (`+old+`)`, lo, hi, before)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		forget = append(forget, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, q := range []string{
		`DELETE FROM run_events WHERE run_id IN (` + old + `)`,
		`UPDATE responses SET object = '' WHERE object != '' AND run_id IN (` + old + `)`,
		`UPDATE responses SET forgotten = 1, prefix_hash = NULL, input_hash = NULL WHERE forgotten = 0 AND run_id IN (` + old + `)`,
	} {
		if _, err := tx.ExecContext(ctx, q, lo, hi, before); err != nil {
			return 0, err
		}
	}
	// A purged response's items go, but for those a newer response
	// shares (release).
	for _, id := range forget {
		if err := release(ctx, tx, id); err != nil {
			return 0, err
		}
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE seq BETWEEN ? AND ? AND ended_at < ?
		AND (request IS NOT NULL OR output != '' OR output_ref <> 0 OR EXISTS (SELECT 1 FROM run_requests q WHERE q.seq = runs.seq))`, lo, hi, before).Scan(&n); err != nil {
		return 0, err
	}
	// A younger run's request kept by reference to a purged one is
	// written whole first (dropRequests).
	if err := dropRequests(ctx, tx, `SELECT seq FROM runs WHERE seq BETWEEN ? AND ? AND ended_at < ?`, lo, hi, before); err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET request = NULL, output = '', output_ref = 0
		WHERE seq BETWEEN ? AND ? AND ended_at < ? AND (request IS NOT NULL OR output != '' OR output_ref <> 0)`, lo, hi, before)
	return n, err
}
