package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// Transition moves run id to t.Status. The lifecycle check is part of the
// UPDATE's WHERE clause, so a concurrent writer cannot change the run
// between check and write; in particular two terminal writes race safely and
// the first one wins. Fields left zero in t keep their stored value.
func (s *Store) Transition(ctx context.Context, id string, t runner.Transition) (err error) {
	defer outage(&err)
	if !t.Status.Valid() {
		return fmt.Errorf("%w: unknown status %q", runner.ErrInvalidTransition, t.Status)
	}
	ts, ok := s.st.transition[t.Status]
	if !ok { // queued: nothing goes back; say why for this run
		return s.refusal(ctx, id, t.Status)
	}
	in, out, total := usageArgs(t.Usage)
	code, msg := errorArgs(t.Error)
	ref := itemref.OutputElided(ctx, id, t.Output)
	pooled := getArgs()
	defer putArgs(pooled)
	args := append(*pooled, t.Reason, nullableInt(t.StartedAt), nullableInt(t.EndedAt),
		in, out, total, ref, nullableString(t.Output), ref, code, msg, nullableCount(t.Attempts),
		nullableInt(t.DurationMs), nullableInt(t.TimeToFirstTokenMs), id, t.Lease, t.Lease)
	*pooled = args // Do runs the write before it returns; the driver binds copies
	// A run that becomes queued or running and is not live here is a
	// waiting run resumed: its host's mark must come down to its seq
	// (marks.go). Any other transition ends the run's time as live.
	live := t.Status == runner.StatusQueued || t.Status == runner.StatusRunning
	resumed := live && !s.marks.isLive(id)
	// What the write did, in one variable: each one the closure sets would
	// be an allocation of its own.
	var w struct {
		n      int64
		added  bool // counted live by this call (a resume)
		raised bool // a raise was written, of host's mark to low
		host   string
		low    int64
	}
	// The closure takes the ledger line, not t: a copy of the whole
	// Transition in every run's closure.
	ledger := t.Ledger
	err = s.writer.Do(ctx, func(ctx context.Context, tx *wtx) error {
		// A rerun (its batch rolled back) starts clean: what the first
		// run counted is not committed.
		if w.added {
			s.marks.remove(id)
		}
		w.added, w.raised = false, false
		res, err := tx.exec(ctx, ts, args...)
		if err != nil {
			return err
		}
		if w.n, err = res.RowsAffected(); err != nil || w.n != 1 {
			return err
		}
		if ledger != nil {
			if err := s.writeLedger(ctx, tx, ledger); err != nil {
				return err
			}
		}
		switch {
		case resumed:
			var seq int64
			var host string
			if err := tx.QueryRowContext(ctx, runSeqSQL, id).Scan(&seq, &host); err != nil {
				return err
			}
			s.marks.add(id, host, seq)
			w.added = true
			_, err = tx.ExecContext(ctx, lowerMarkSQL, host, seq)
			return err
		case !live:
			var ok bool
			if w.host, w.low, ok = s.marks.raiseOf(id); ok {
				if _, err := tx.ExecContext(ctx, raiseMarkSQL, w.low, w.host); err != nil {
					return err
				}
				w.raised = true
			}
		}
		return nil
	})
	switch {
	case err != nil && w.added:
		s.marks.remove(id) // the resume did not commit
	case err == nil && w.n == 1 && !live:
		s.marks.remove(id)
		if w.raised {
			s.marks.setRaised(w.host, w.low)
		}
	}
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: transition run %s: %w", id, err)
	}
	if w.n == 1 {
		return nil
	}
	return s.refusalFenced(ctx, id, t.Status, t.Lease)
}

// refusal explains why Transition changed nothing. It reads after the
// refused write committed, on a reader. It is off the request path (a
// refused write), so its query is not prepared.
func (s *Store) refusal(ctx context.Context, id string, to runner.Status) error {
	var cur runner.Status
	err := s.r.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound("run", id)
	case err != nil:
		return fmt.Errorf("runner/store/sqlite: transition run %s: %w", id, err)
	case cur.Terminal():
		return fmt.Errorf("%w: run %s is already %s", runner.ErrNotFound, id, cur)
	}
	return fmt.Errorf("%w: run %s is %s, cannot become %s", runner.ErrInvalidTransition, id, cur, to)
}
