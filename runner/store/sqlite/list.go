package sqlite

import (
	"context"
	"database/sql"
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
	query, args := listQuery(where, args, q.SessionID)
	args = append(args, limit+1) // one more tells whether there is a next page
	return s.listRuns(ctx, query, args, limit, q.SessionID != "")
}

// listQuery is ListRuns' SELECT, newest first, of the runs that match
// every term of where (whose parameters are args) and are of session
// when it is not "". A session's runs are two sets (migration 10): the
// run that opened it, found by its id (contract.OpenerID), and the runs
// that continued it, in runs_session. Both are read in seq order and
// merged, so a page of a long session reads a page of its index; the
// query selects seq first for that merge (seqFirst).
func listQuery(where []string, args []any, session string) (string, []any) {
	if session == "" {
		query := `SELECT ` + runColumns + ` FROM runs`
		if len(where) > 0 {
			query += " WHERE " + strings.Join(where, " AND ")
		}
		return query + " ORDER BY seq DESC LIMIT ?", args
	}
	arm := func(cond string) string {
		return `SELECT seq, ` + runColumns + ` FROM runs WHERE ` + strings.Join(append([]string{cond}, where...), " AND ")
	}
	query := arm("session_id = ? AND "+sessionNotOwnSQL) + " UNION ALL " +
		arm("id = ? AND session_id = ?") + " ORDER BY seq DESC LIMIT ?"
	both := make([]any, 0, 2*len(args)+3)
	both = append(append(append(both, session), args...), contract.OpenerID(session), session)
	return query, append(both, args...)
}

// listRuns runs a listQuery and reads at most limit runs from it; more
// says whether there was another. withSeq says the rows start with seq.
func (s *Store) listRuns(ctx context.Context, query string, args []any, limit int, withSeq bool) ([]runner.Run, bool, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
	}
	defer rows.Close()
	runs := make([]runner.Run, 0, limit)
	for rows.Next() {
		var row scanner = rows
		if withSeq {
			row = seqFirst{rows}
		}
		r, err := scanRun(row)
		if err != nil {
			return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
	}
	rows.Close()
	for i := range runs {
		if err := s.inflate(ctx, &runs[i]); err != nil {
			return nil, false, fmt.Errorf("runner/store/sqlite: list runs: %w", err)
		}
	}
	if len(runs) > limit {
		return runs[:limit], true, nil
	}
	return runs, false, nil
}

// seqFirst reads a row whose first column is seq, which the run does not
// keep, before runColumns.
type seqFirst struct{ rows *sql.Rows }

func (r seqFirst) Scan(dest ...any) error {
	var seq int64
	return r.rows.Scan(append([]any{&seq}, dest...)...)
}
