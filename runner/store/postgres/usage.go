package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/runedge/runedge/runner"
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

// usageSQL is q as one statement (the SQLite driver's, in PostgreSQL's
// words for a month and for sums, which are numeric there).
func usageSQL(q runner.UsageQuery) (string, []any) {
	var b strings.Builder
	args := []any{q.From, q.To}
	b.WriteString("SELECT ")
	switch {
	case q.Bucket == runner.BucketHour:
		b.WriteString("(at / 3600) * 3600")
	case q.Bucket == runner.BucketDay:
		b.WriteString("(at / 86400) * 86400")
	case q.Bucket == runner.BucketMonth:
		b.WriteString("CAST(extract(epoch FROM date_trunc('month', to_timestamp(at) AT TIME ZONE 'UTC')) AS BIGINT)")
	case q.Width > 0:
		w := strconv.FormatInt(q.Width, 10)
		b.WriteString("(at / " + w + ") * " + w)
	default:
		b.WriteString("CAST($1 AS BIGINT)")
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
	b.WriteString(`, count(*), CAST(coalesce(sum(input_tokens), 0) AS BIGINT), CAST(coalesce(sum(cached_tokens), 0) AS BIGINT),
		CAST(coalesce(sum(output_tokens), 0) AS BIGINT), CAST(coalesce(sum(reasoning_tokens), 0) AS BIGINT),
		CAST(coalesce(sum(cost_nanos), 0) AS BIGINT)
		FROM usage_ledger WHERE at >= $1 AND at < $2`)
	for _, f := range []struct{ col, v string }{{"tenant_id", q.TenantID}, {"token", q.Token}, {"actor_id", q.ActorID}} {
		if f.v != "" {
			args = append(args, f.v)
			b.WriteString(" AND " + f.col + " = $" + strconv.Itoa(len(args)))
		}
	}
	args = append(args, int64(max(q.Limit, 1))+1)
	b.WriteString(" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LIMIT $" + strconv.Itoa(len(args)))
	return b.String(), args
}
