package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// ListRuns returns runs newest first. Order is the insertion sequence, not
// created_at: runs created in the same second still page in a stable order.
// An After id that is unknown (or of another tenant, when TenantID is set)
// yields an empty page, so a cursor cannot probe other tenants' ids.
func (s *Store) ListRuns(ctx context.Context, q runner.ListQuery) (_ []runner.Run, _ bool, err error) {
	defer outage(&err)
	// Page sizes as the native API's list takes them (internal/contract).
	limit := contract.RunsPaging.Clamp(q.Limit)

	var where []string
	var args []any
	if q.TenantID != "" {
		where = append(where, "tenant_id = ?")
		args = append(args, q.TenantID)
	}
	if q.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, q.SessionID)
	}
	if q.Status != "" {
		where = append(where, "status = ?")
		args = append(args, q.Status)
	}
	if q.After != "" {
		cursor := "SELECT seq FROM runs WHERE id = ?"
		args = append(args, q.After)
		if q.TenantID != "" {
			cursor += " AND tenant_id = ?"
			args = append(args, q.TenantID)
		}
		// Unknown cursor: the subquery is NULL and "seq < NULL" matches nothing.
		where = append(where, "seq < ("+cursor+")")
	}
	query := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT ?"
	args = append(args, limit+1) // one more tells whether there is a next page

	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
	}
	defer rows.Close()
	runs := make([]runner.Run, 0, limit)
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
	}
	if len(runs) > limit {
		return runs[:limit], true, nil
	}
	return runs, false, nil
}
