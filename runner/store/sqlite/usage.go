package sqlite

import (
	"context"
	"fmt"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/usagesql"
)

// The usage ledger (migration 12): a line per run that reported usage,
// written with its terminal transition in the same commit. Its primary
// key leads with the time, so a sum reads its range in order (a tenant's
// too: an index by tenant would cost every run's end a B-tree more).

var _ runner.UsageStore = (*Store)(nil)

const insertLedgerSQL = `INSERT INTO usage_ledger (at, run_id, tenant_id, actor_id, token, model,
	input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_nanos)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// writeLedger writes e inside the transaction that ended its run.
func (s *Store) writeLedger(ctx context.Context, tx *wtx, e *runner.UsageEntry) error {
	_, err := tx.exec(ctx, s.st.insertLedger, e.At, e.RunID, e.TenantID, e.ActorID, e.Token, e.Model,
		e.InputTokens, e.CachedTokens, e.OutputTokens, e.ReasoningTokens, e.CostNanos)
	return err
}

// SumUsage sums the ledger with GROUP BY (runner.UsageStore).
func (s *Store) SumUsage(ctx context.Context, q runner.UsageQuery) (_ []runner.UsageRow, err error) {
	defer outage(&err)
	query, args := usageSQL(q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: sum usage: %w", err)
	}
	defer rows.Close()
	var out []runner.UsageRow
	for rows.Next() {
		var r runner.UsageRow
		if err := rows.Scan(&r.Start, &r.TenantID, &r.ActorID, &r.Token, &r.Runs, &r.InputTokens,
			&r.CachedTokens, &r.OutputTokens, &r.ReasoningTokens, &r.CostNanos); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: sum usage: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: sum usage: %w", err)
	}
	return out, nil
}

// usageSQL is q as one statement, in SQLite's words for a month.
func usageSQL(q runner.UsageQuery) (string, []any) { return usagesql.Build(sqliteUsage, q) }

var sqliteUsage = usagesql.Dialect{
	Month: "CAST(strftime('%s', at, 'unixepoch', 'start of month') AS INTEGER)",
	Sum:   func(e string) string { return e },
	Param: func(int) string { return "?" },
}
