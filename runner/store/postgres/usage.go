package postgres

import (
	"context"
	"strconv"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/usagesql"
)

// The usage ledger (migration 12): a line per run that reported usage,
// queued in the batch of its terminal transition, so both commit or
// neither.

var _ runner.UsageStore = (*Store)(nil)

// insertLedgerSQL writes the line when the transition before it in the
// batch took effect (the run is in the status it wrote), once per run.
const insertLedgerSQL = `INSERT INTO usage_ledger (at, run_id, tenant_id, actor_id, token, model,
	input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_nanos)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
	WHERE EXISTS (SELECT 1 FROM runs WHERE id = $2 AND status = $12)
	ON CONFLICT (run_id) DO NOTHING`

func writeLedger(p *pipe, e *runner.UsageEntry, status string) {
	p.exec(insertLedgerSQL, e.At, e.RunID, e.TenantID, e.ActorID, e.Token, e.Model,
		e.InputTokens, e.CachedTokens, e.OutputTokens, e.ReasoningTokens, e.CostNanos, status)
}

// SumUsage sums the ledger with GROUP BY (runner.UsageStore).
func (s *Store) SumUsage(ctx context.Context, q runner.UsageQuery) ([]runner.UsageRow, error) {
	query, args := usageSQL(q)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, wrap("sum usage", err)
	}
	defer rows.Close()
	var out []runner.UsageRow
	for rows.Next() {
		var r runner.UsageRow
		if err := rows.Scan(&r.Start, &r.TenantID, &r.ActorID, &r.Token, &r.Runs, &r.InputTokens,
			&r.CachedTokens, &r.OutputTokens, &r.ReasoningTokens, &r.CostNanos); err != nil {
			return nil, wrap("sum usage", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("sum usage", err)
	}
	return out, nil
}

// usageSQL is q as one statement, in PostgreSQL's words for a month, for
// sums (numeric there) and for placeholders.
func usageSQL(q runner.UsageQuery) (string, []any) { return usagesql.Build(pgUsage, q) }

var pgUsage = usagesql.Dialect{
	Month: "CAST(extract(epoch FROM date_trunc('month', to_timestamp(at) AT TIME ZONE 'UTC')) AS BIGINT)",
	Sum:   func(e string) string { return "CAST(" + e + " AS BIGINT)" },
	Param: func(n int) string { return "$" + strconv.Itoa(n) },
}
