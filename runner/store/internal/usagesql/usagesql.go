// Package usagesql builds the statement that sums the usage ledger
// (runner.UsageQuery) for both store drivers: the bucket and the grouped
// keys, the sums, the range and filters, GROUP BY the first four columns.
// The drivers differ only in their words for a calendar month, for a sum
// (numeric in PostgreSQL, so cast back to an integer) and for a
// placeholder, which a Dialect names; the shape is written once.
package usagesql

import (
	"strconv"
	"strings"

	"github.com/runedge/runedge/runner"
)

// Dialect is what one SQL engine says differently.
type Dialect struct {
	// Month is the expression of the first second of at's calendar month
	// (UTC), in Unix seconds.
	Month string
	// Sum wraps an aggregate so that it scans into an int64.
	Sum func(expr string) string
	// Param is the n-th placeholder (counting from 1).
	Param func(n int) string
}

// Build is q as one statement in d's words, and its arguments.
func Build(d Dialect, q runner.UsageQuery) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT ")
	switch {
	case q.Bucket == runner.BucketHour:
		b.WriteString("(at / 3600) * 3600")
	case q.Bucket == runner.BucketDay:
		b.WriteString("(at / 86400) * 86400")
	case q.Bucket == runner.BucketMonth:
		b.WriteString(d.Month)
	case q.Width > 0:
		w := strconv.FormatInt(q.Width, 10)
		b.WriteString("(at / " + w + ") * " + w)
	default: // one bucket: the range's start
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
	b.WriteString(", count(*)")
	for _, col := range []string{"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cost_nanos"} {
		b.WriteString(", " + d.Sum("coalesce(sum("+col+"), 0)"))
	}
	args := []any{q.From, q.To}
	b.WriteString(" FROM usage_ledger WHERE at >= " + d.Param(1) + " AND at < " + d.Param(2))
	for _, f := range []struct{ col, v string }{{"tenant_id", q.TenantID}, {"token", q.Token}, {"actor_id", q.ActorID}} {
		if f.v != "" {
			args = append(args, f.v)
			b.WriteString(" AND " + f.col + " = " + d.Param(len(args)))
		}
	}
	args = append(args, int64(max(q.Limit, 1))+1)
	b.WriteString(" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LIMIT " + d.Param(len(args)))
	return b.String(), args
}
