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
	if r.Status != runner.StatusQueued && r.Status != runner.StatusRunning {
		return fmt.Errorf("%w: a run is created queued or running, not %q", runner.ErrInvalidTransition, r.Status)
	}
	in, out, total := usageArgs(r.Usage)
	code, msg := errorArgs(r.Error)
	var request any
	if len(r.Request) > 0 {
		request = string(r.Request)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO runs (
		id, status, status_reason, session_id, thread_id,
		actor_id, actor_type, actor_name, tenant_id, endpoint, model,
		request_id, correlation_id, created_at, started_at, ended_at,
		input_tokens, output_tokens, total_tokens, error_code, error_message,
		request, output, attempts
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Status, r.StatusReason, r.SessionID, r.ThreadID,
		r.Actor.ID, r.Actor.Type, r.Actor.Name, r.TenantID, r.Endpoint, r.Model,
		r.RequestID, r.CorrelationID, r.CreatedAt, nullableInt(r.StartedAt), nullableInt(r.EndedAt),
		in, out, total, code, msg, request, r.Output, r.Attempts)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create run %s: %w", r.ID, err)
	}
	return nil
}

// GetRun returns one run; tenantID "" means any tenant (admin).
func (s *Store) GetRun(ctx context.Context, tenantID, id string) (runner.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE id = ?`
	args := []any{id}
	if tenantID != "" {
		q += ` AND tenant_id = ?`
		args = append(args, tenantID)
	}
	r, err := scanRun(s.r.QueryRowContext(ctx, q, args...))
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
