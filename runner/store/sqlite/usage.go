package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/runedge/runedge/runner"
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

// usageSQL is q as one statement: the bucket and the grouped keys, the
// sums, WHERE the range and filters, GROUP BY the first four columns.
func usageSQL(q runner.UsageQuery) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT ")
	switch {
	case q.Bucket == runner.BucketHour:
		b.WriteString("(at / 3600) * 3600")
	case q.Bucket == runner.BucketDay:
		b.WriteString("(at / 86400) * 86400")
	case q.Bucket == runner.BucketMonth:
		b.WriteString("CAST(strftime('%s', at, 'unixepoch', 'start of month') AS INTEGER)")
	case q.Width > 0:
		w := strconv.FormatInt(q.Width, 10)
		b.WriteString("(at / " + w + ") * " + w)
	default:
		b.WriteString(strconv.FormatInt(q.From, 10))
	}
	for _, k := range []struct {
		on  bool
		col string
	}{{q.ByTenant, "tenant_id"}, {q.ByActor, "actor_id"}, {q.ByToken, "token"}} {
		if k.on {
			b.WriteString(", " + k.col)
		} else {
			b.WriteString(", ''")
		}
	}
	b.WriteString(`, count(*), coalesce(sum(input_tokens), 0), coalesce(sum(cached_tokens), 0),
		coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_tokens), 0), coalesce(sum(cost_nanos), 0)
		FROM usage_ledger WHERE at >= ? AND at < ?`)
	args := []any{q.From, q.To}
	for _, f := range []struct{ col, v string }{{"tenant_id", q.TenantID}, {"token", q.Token}, {"actor_id", q.ActorID}} {
		if f.v != "" {
			b.WriteString(" AND " + f.col + " = ?")
			args = append(args, f.v)
		}
	}
	b.WriteString(" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LIMIT ?")
	args = append(args, int64(max(q.Limit, 1))+1)
	return b.String(), args
}
