package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/runedge/runedge/runner"
)

// Leases (runner/lease.go) live in two columns of runs (migration 11): the
// start insert writes them, so taking a lease costs no statement of its
// own, and a terminal or waiting write ends the lease in the same UPDATE
// that is fenced by the token (transitionSQL). Renewals and releases name
// their runs by id; a takeover scans the live runs from the least of the
// hosts' low-water marks (marks.go), as start-up recovery does, and lowers
// the mark of the host that takes them.

var _ runner.LeaseStore = (*Store)(nil)

// leaseExpiresArg is the insert's lease_expires: NULL for a run without a
// lease, and for one whose lease counts from its write (Run.LeaseFor),
// whose expiry StartRun puts in place as it executes (leaseFromNow).
func leaseExpiresArg(r *runner.Run) any {
	if r.LeaseExpiresAt == 0 || r.LeaseFor > 0 {
		return nil
	}
	return r.LeaseExpiresAt
}

// leaseFromNow is the expiry of a lease of length d taken now, by the host's
// clock (in Unix ms, as every expiry): a start computes it in its
// transaction, just before its run's row is inserted, so that a run is
// never committed with its first lease already run out, however long the
// start waited for the writer.
func leaseFromNow(d time.Duration) int64 { return time.Now().Add(d).UnixMilli() }

const (
	// heldLeasesSQL is the set of (run id, token) pairs a renewal or a
	// release names, as a JSON array of pairs: one statement for all of
	// them, each found by its id.
	heldLeasesSQL = `(SELECT json_extract(value, '$[0]') AS rid, json_extract(value, '$[1]') AS tok FROM json_each(?)) AS held`
	renewSQL      = `UPDATE runs SET lease_expires = ? FROM ` + heldLeasesSQL + `
		WHERE runs.id = held.rid AND runs.lease_token = held.tok AND runs.status IN ('queued', 'running')
		AND runs.lease_expires IS NOT NULL
		RETURNING runs.id`
	// acquireSQL's parameters: the new host, the new expiry, then the
	// claim's condition (claimSQL or claimDeadSQL), then the limit.
	acquireSQL = `UPDATE runs SET host_id = ?, lease_token = lease_token + 1, lease_expires = ?
		WHERE seq IN (SELECT seq FROM runs
			WHERE seq >= (SELECT COALESCE(MIN(low_seq), 0) FROM live_marks)
			AND status IN ('queued', 'running') AND %s
			ORDER BY seq LIMIT ?)
		RETURNING seq, id`
	claimSQL     = `lease_expires < ?`
	claimDeadSQL = `(lease_expires < ? OR host_id IN (?, ''))`
)

// heldJSON is held as heldLeasesSQL reads it.
func heldJSON(held []runner.Lease) (string, error) {
	pairs := make([][2]any, len(held))
	for i, l := range held {
		pairs[i] = [2]any{l.RunID, l.Token}
	}
	b, err := json.Marshal(pairs)
	return string(b), err
}

// RenewLeases extends the leases in held still held, in one statement.
func (s *Store) RenewLeases(ctx context.Context, held []runner.Lease, until int64) (lost []string, err error) {
	defer outage(&err)
	if len(held) == 0 {
		return nil, nil
	}
	pairs, err := heldJSON(held)
	if err != nil {
		return nil, err
	}
	renewed := make(map[string]bool, len(held))
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		clear(renewed)
		rows, err := tx.c.QueryContext(ctx, renewSQL, until, pairs)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			renewed[id] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: renew leases: %w", err)
	}
	for _, l := range held {
		if !renewed[l.RunID] {
			lost = append(lost, l.RunID)
		}
	}
	return lost, nil
}

// ReleaseLeases ends the leases in held still held (expiry 0), so that
// the next takeover scan finds their runs at once.
func (s *Store) ReleaseLeases(ctx context.Context, held []runner.Lease) (err error) {
	defer outage(&err)
	if len(held) == 0 {
		return nil
	}
	pairs, err := heldJSON(held)
	if err != nil {
		return err
	}
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		rows, err := tx.c.QueryContext(ctx, renewSQL, 0, pairs)
		if err != nil {
			return err
		}
		return rows.Close()
	})
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: release leases: %w", err)
	}
	return nil
}

// AcquireExpired takes over the runs whose lease ran out (and c.DeadHost's)
// in one transaction on the writer: SQLite has one writer, so no run is
// taken twice. The taking host's mark comes down to the least seq taken,
// in the same transaction, so that its recovery still finds them.
func (s *Store) AcquireExpired(ctx context.Context, c runner.LeaseClaim) (_ []runner.Run, err error) {
	defer outage(&err)
	limit := int64(c.Limit)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	query := fmt.Sprintf(acquireSQL, claimSQL)
	args := []any{c.HostID, c.Until, c.Now, limit}
	if c.DeadHost != "" {
		query = fmt.Sprintf(acquireSQL, claimDeadSQL)
		args = []any{c.HostID, c.Until, c.Now, c.DeadHost, limit}
	}
	// A host taking over its own runs at its start, all of them, is
	// recovering as MarkInterrupted does, and its marks move the same way.
	recovery := c.DeadHost != "" && c.DeadHost == c.HostID && c.Limit <= 0
	type taken struct {
		seq int64
		id  string
	}
	var got []taken
	// Every host's mark raised past the runs it no longer has live, at
	// most once a sweepEvery (marks.go), after this scan's own takeovers.
	sweep := !recovery && s.marks.sweepDue()
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		got = got[:0]
		rows, err := tx.c.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		low := int64(-1)
		for rows.Next() {
			var t taken
			if err := rows.Scan(&t.seq, &t.id); err != nil {
				rows.Close()
				return err
			}
			got = append(got, t)
			if low < 0 || t.seq < low {
				low = t.seq
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if recovery {
			// Every live run of the host (and of "") is now one of
			// those taken: its mark goes to the least of them, or past
			// the last run, as MarkInterrupted leaves it.
			if _, err := tx.ExecContext(ctx, `INSERT INTO live_marks (host_id, low_seq)
				VALUES (?, COALESCE(?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs)))
				ON CONFLICT (host_id) DO UPDATE SET low_seq = excluded.low_seq`, c.HostID, nullableSeq(low)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE live_marks SET low_seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs)
				WHERE host_id = ''`)
			return err
		}
		if low >= 0 {
			if _, err := tx.ExecContext(ctx, lowerMarkSQL, c.HostID, low); err != nil {
				return err
			}
		}
		if sweep {
			_, err := tx.ExecContext(ctx, sweepMarksSQL)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: acquire expired leases: %w", err)
	}
	if recovery {
		s.marks.own(c.HostID)
	}
	runs := make([]runner.Run, 0, len(got))
	for _, t := range got {
		s.marks.add(t.id, c.HostID, t.seq)
		r, err := s.leasedRun(ctx, t.id)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
	}
	s.marks.setMarked(c.HostID)
	return runs, nil
}

// nullableSeq is seq, or NULL when it is negative (none).
func nullableSeq(seq int64) any {
	if seq < 0 {
		return nil
	}
	return seq
}

// leasedRun reads a run with its lease.
func (s *Store) leasedRun(ctx context.Context, id string) (runner.Run, error) {
	r, err := s.GetRun(ctx, "", id)
	if err != nil {
		return r, err
	}
	var exp sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT lease_token, lease_expires FROM runs WHERE id = ?`, id).Scan(&r.LeaseToken, &exp); err != nil {
		return r, fmt.Errorf("runner/store/sqlite: read lease of run %s: %w", id, err)
	}
	r.LeaseExpiresAt = exp.Int64
	return r, nil
}

// refusalFenced explains why a fenced Transition changed nothing: the
// run's lease token is no longer lease (ErrFenced), or refusal's reasons.
func (s *Store) refusalFenced(ctx context.Context, id string, to runner.Status, lease int64) error {
	if lease != 0 {
		var tok int64
		err := s.r.QueryRowContext(ctx, `SELECT lease_token FROM runs WHERE id = ?`, id).Scan(&tok)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return notFound("run", id)
		case err != nil:
			return fmt.Errorf("runner/store/sqlite: transition run %s: %w", id, err)
		case tok != lease:
			return fmt.Errorf("%w: run %s has lease token %d, the write holds %d", runner.ErrFenced, id, tok, lease)
		}
	}
	return s.refusal(ctx, id, to)
}
