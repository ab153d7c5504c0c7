package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// transitionSQL checks the lifecycle in the WHERE clause ($15 is the list
// of states the target may come from), so concurrent writers on any host
// race safely and the first terminal write wins. $16 fences it: the
// writer's lease token (0: unfenced); a target other than queued or running
// ends the lease. outputRef says that the output text is the first output
// item of the response whose end rides on this write
// (itemref.OutputElided): the run then keeps a reference to it
// (output_ref), unless the response was deleted meanwhile, when its
// output items are not written.
//
// The two forms are two statements, not one with a flag: with the flag a
// parameter, the server's generic plan counted the response lookups that
// a custom plan folds away for a false flag, so it planned the statement
// again at every run's end (0.17 ms of the server's CPU each, RATIONALE.md
// "PostgreSQL for a fleet"); each form now keeps its generic plan.
func transitionSQL(outputRef bool) string {
	output := `output = COALESCE($8, output),`
	if outputRef {
		output = `output = CASE WHEN EXISTS (SELECT 1 FROM responses WHERE run_id = $14 AND NOT deleted) THEN ''
		ELSE COALESCE($8, output) END,
	output_ref = EXISTS (SELECT 1 FROM responses WHERE run_id = $14 AND NOT deleted),`
	}
	return `UPDATE runs SET
	status = $1, status_reason = $2,
	started_at = COALESCE($3, started_at), ended_at = COALESCE($4, ended_at),
	input_tokens = COALESCE($5, input_tokens), output_tokens = COALESCE($6, output_tokens),
	total_tokens = COALESCE($7, total_tokens),
	` + output + `
	error_code = COALESCE($9, error_code), error_message = COALESCE($10, error_message),
	attempts = COALESCE($11, attempts),
	duration_ms = COALESCE($12, duration_ms), ttft_ms = COALESCE($13, ttft_ms),
	lease_expires = CASE WHEN $1 IN ('queued', 'running') THEN lease_expires END
	WHERE id = $14 AND status = ANY($15) AND ($16::bigint = 0 OR lease_token = $16)`
}

var (
	transitionPlainSQL     = transitionSQL(false)
	transitionOutputRefSQL = transitionSQL(true)
)

// Transition moves run id to t.Status (see runner.Store).
func (s *Store) Transition(ctx context.Context, id string, t runner.Transition) error {
	if !t.Status.Valid() {
		return fmt.Errorf("%w: unknown status %q", runner.ErrInvalidTransition, t.Status)
	}
	from := runner.TransitionSources(t.Status)
	if len(from) == 0 {
		return s.refusal(ctx, id, t.Status)
	}
	fromText := make([]string, len(from))
	for i, f := range from {
		fromText[i] = string(f)
	}
	in, out, total := usageArgs(t.Usage)
	code, msg := errorArgs(t.Error)
	q := transitionPlainSQL
	if itemref.OutputElided(ctx, id, t.Output) {
		q = transitionOutputRefSQL
	}
	var n int64
	err := s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
		p.check(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		}, q, string(t.Status), t.Reason, nullableInt(t.StartedAt), nullableInt(t.EndedAt),
			in, out, total, nullableString(t.Output), code, msg, nullableCount(t.Attempts),
			nullableInt(t.DurationMs), nullableInt(t.TimeToFirstTokenMs), id, fromText, t.Lease)
		if t.Ledger != nil {
			writeLedger(p, t.Ledger, string(t.Status))
		}
		return nil
	})
	if err != nil {
		return wrap("transition run "+id, err)
	}
	if n == 1 {
		return nil
	}
	return s.refusalFenced(ctx, id, t.Status, t.Lease)
}

// refusal explains why Transition changed nothing.
func (s *Store) refusal(ctx context.Context, id string, to runner.Status) error {
	var cur string
	err := s.pool.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, id).Scan(&cur)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound("run", id)
	case err != nil:
		return wrap("transition run "+id, err)
	case runner.Status(cur).Terminal():
		return fmt.Errorf("%w: run %s is already %s", runner.ErrNotFound, id, cur)
	}
	return fmt.Errorf("%w: run %s is %s, cannot become %s", runner.ErrInvalidTransition, id, cur, to)
}
