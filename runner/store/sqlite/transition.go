package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/runedge/runedge/runner"
)

// Transition moves run id to t.Status. The lifecycle check is part of the
// UPDATE's WHERE clause, so a concurrent writer cannot change the run
// between check and write; in particular two terminal writes race safely and
// the first one wins. Fields left zero in t keep their stored value.
func (s *Store) Transition(ctx context.Context, id string, t runner.Transition) error {
	if !t.Status.Valid() {
		return fmt.Errorf("%w: unknown status %q", runner.ErrInvalidTransition, t.Status)
	}
	from := runner.TransitionSources(t.Status)
	if len(from) == 0 { // queued: nothing goes back; say why for this run
		return s.refusal(ctx, id, t.Status)
	}
	in, out, total := usageArgs(t.Usage)
	code, msg := errorArgs(t.Error)
	args := []any{t.Status, t.Reason, nullableInt(t.StartedAt), nullableInt(t.EndedAt),
		in, out, total, nullableString(t.Output), code, msg, nullableCount(t.Attempts), id}
	for _, f := range from {
		args = append(args, f)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET
		status = ?, status_reason = ?,
		started_at = COALESCE(?, started_at), ended_at = COALESCE(?, ended_at),
		input_tokens = COALESCE(?, input_tokens), output_tokens = COALESCE(?, output_tokens),
		total_tokens = COALESCE(?, total_tokens), output = COALESCE(?, output),
		error_code = COALESCE(?, error_code), error_message = COALESCE(?, error_message),
		attempts = COALESCE(?, attempts)
		WHERE id = ? AND status IN (?`+strings.Repeat(", ?", len(from)-1)+`)`, args...)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: transition run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("runner/store/sqlite: transition run %s: %w", id, err)
	} else if n == 1 {
		return nil
	}
	return s.refusal(ctx, id, t.Status)
}

// refusal explains why Transition changed nothing.
func (s *Store) refusal(ctx context.Context, id string, to runner.Status) error {
	var cur runner.Status
	err := s.w.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&cur)
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
