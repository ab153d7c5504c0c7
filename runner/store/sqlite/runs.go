package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runedge/runedge/runner"
)

// CreateRun inserts a run. Only queued and running runs are created: a run
// reaches every other state through Transition, which enforces the
// lifecycle.
func (s *Store) CreateRun(ctx context.Context, r *runner.Run) error {
	args, err := runArgs(r)
	if err != nil {
		return err
	}
	if _, err := s.st.insertRun.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("runner/store/sqlite: create run %s: %w", r.ID, err)
	}
	return nil
}

// StartRun records a run together with the session and thread it opens, in
// one write transaction: one commit (one WAL append, one round of file
// locks) instead of one per row, and no session or thread is left behind
// when the run cannot be recorded. A run that opens nothing is a single
// INSERT, which commits on its own without BEGIN and COMMIT.
func (s *Store) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	args, err := runArgs(r)
	if err != nil {
		return err
	}
	if !newSession && !newThread {
		if _, err := s.st.insertRun.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("runner/store/sqlite: start run %s: %w", r.ID, err)
		}
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: start run %s: %w", r.ID, err)
	}
	defer tx.Rollback() // after Commit, a no-op
	if newSession {
		if _, err := tx.StmtContext(ctx, s.st.insertSession).ExecContext(ctx, r.SessionID, r.TenantID, r.CreatedAt); err != nil {
			return fmt.Errorf("runner/store/sqlite: start run %s: create session: %w", r.ID, err)
		}
	}
	if newThread {
		if err := insertThread(ctx, tx.StmtContext(ctx, s.st.insertThread), r.ThreadID, r.SessionID, r.TenantID, r.CreatedAt); err != nil {
			return err
		}
	}
	if _, err := tx.StmtContext(ctx, s.st.insertRun).ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("runner/store/sqlite: start run %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("runner/store/sqlite: start run %s: commit: %w", r.ID, err)
	}
	return nil
}

// runArgs checks that r may be created and returns insertRunSQL's
// arguments.
func runArgs(r *runner.Run) ([]any, error) {
	if r.Status != runner.StatusQueued && r.Status != runner.StatusRunning {
		return nil, fmt.Errorf("%w: a run is created queued or running, not %q", runner.ErrInvalidTransition, r.Status)
	}
	in, out, total := usageArgs(r.Usage)
	code, msg := errorArgs(r.Error)
	var request any
	if len(r.Request) > 0 {
		request = string(r.Request)
	}
	return []any{
		r.ID, r.Status, r.StatusReason, r.SessionID, r.ThreadID,
		r.Actor.ID, r.Actor.Type, r.Actor.Name, r.TenantID, r.Endpoint, r.Model,
		r.RequestID, r.CorrelationID, r.CreatedAt, nullableInt(r.StartedAt), nullableInt(r.EndedAt),
		in, out, total, code, msg, request, r.Output, r.Attempts,
		nullableInt(r.DurationMs), nullableInt(r.TimeToFirstTokenMs),
	}, nil
}

// GetRun returns one run; tenantID "" means any tenant (admin).
func (s *Store) GetRun(ctx context.Context, tenantID, id string) (runner.Run, error) {
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
	return r, nil
}

// interruptedMessage is recorded on runs a crash left unfinished.
const interruptedMessage = "the runner stopped before the run finished"

// MarkInterrupted fails every queued or running run with reason
// interrupted. It runs at start-up, before any run of this process exists,
// so every such run belongs to a process that is gone. Waiting runs are
// left alone: they are paused on purpose and can still be resumed or
// cancelled.
func (s *Store) MarkInterrupted(ctx context.Context, at int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE runs
		SET status = ?, status_reason = ?, ended_at = ?, error_code = ?, error_message = ?
		WHERE status IN (?, ?)`,
		runner.StatusFailed, runner.ReasonInterrupted, at, runner.ReasonInterrupted, interruptedMessage,
		runner.StatusQueued, runner.StatusRunning)
	if err != nil {
		return 0, fmt.Errorf("runner/store/sqlite: mark interrupted: %w", err)
	}
	return res.RowsAffected()
}
