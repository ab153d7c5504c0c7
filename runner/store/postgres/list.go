package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// ListRuns returns runs newest first, by insertion order (seq). An After
// id that is unknown or another tenant's yields an empty page.
func (s *Store) ListRuns(ctx context.Context, q runner.ListQuery) ([]runner.Run, bool, error) {
	// Page sizes as the native API's list takes them (internal/contract).
	limit := contract.RunsPaging.Clamp(q.Limit)
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.TenantID != "" {
		where = append(where, "tenant_id = "+arg(q.TenantID))
	}
	if q.SessionID != "" {
		where = append(where, "session_id = "+arg(q.SessionID))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(string(q.Status)))
	}
	if q.After != "" {
		cursor := "SELECT seq FROM runs WHERE id = " + arg(q.After)
		if q.TenantID != "" {
			cursor += " AND tenant_id = " + arg(q.TenantID)
		}
		// Unknown cursor: NULL, and "seq < NULL" matches nothing.
		where = append(where, "seq < ("+cursor+")")
	}
	query := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT " + arg(limit+1)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, false, wrap("list runs", err)
	}
	defer rows.Close()
	runs := make([]runner.Run, 0, limit)
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, false, wrap("list runs", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, wrap("list runs", err)
	}
	rows.Close()
	for i := range runs {
		if err := s.inflate(ctx, &runs[i]); err != nil {
			return nil, false, wrap("list runs", err)
		}
	}
	if len(runs) > limit {
		return runs[:limit], true, nil
	}
	return runs, false, nil
}
