package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runedge/runedge/runner"
)

// The history probe (runner.HistoryProbe) lets a host keep replayed
// history between turns: each turn reads the tenant's forget generation,
// one row of history_gens, instead of reading every message again; a
// chain is counted, from the indexes alone (response_items_run), only
// when a host first keeps it.

var _ runner.HistoryProbe = (*Store)(nil)

// chainCountsSQL walks the chain as Conversation does and counts each
// response's items in response_items_run, reading no message. A forgotten
// response (deleted, purged) counts none: its rows may stay, shared with a
// response based on it (itemref), but the chain no longer reads them. The chain's
// responses are the tenant's (previous_response_id is looked up in the
// tenant), so the items need no tenant check.
const chainCountsSQL = `WITH RECURSIVE chain(run_id, depth) AS (
		SELECT run_id, 0 FROM responses WHERE run_id = ? AND tenant_id = ? AND deleted = 0
		UNION ALL
		SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
		WHERE r.previous_run_id != '' AND c.depth + 1 < ?
	), counted(n) AS (
		SELECT CASE WHEN r.forgotten = 0 THEN (SELECT COUNT(*) FROM response_items i WHERE i.run_id = c.run_id) ELSE 0 END
		FROM chain c LEFT JOIN responses r ON r.run_id = c.run_id
	)
	SELECT COUNT(*), COALESCE(SUM(n), 0), COALESCE(SUM(n > 0), 0) FROM counted`

// ChainCounts implements runner.HistoryProbe.
func (s *Store) ChainCounts(ctx context.Context, tenantID, runID string, maxTurns int) (turns, items, withItems int, err error) {
	defer outage(&err)
	err = s.r.QueryRowContext(ctx, chainCountsSQL, runID, tenantID, maxTurns).Scan(&turns, &items, &withItems)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("runner/store/sqlite: chain of %s: %w", runID, err)
	}
	if turns == 0 {
		return 0, 0, 0, notFound("response of run", runID)
	}
	return turns, items, withItems, nil
}

// forgetGenSQL is a tenant's forget generation, prepared (stmts.go): every
// turn that continues a kept history reads it.
const forgetGenSQL = `SELECT gen FROM history_gens WHERE tenant_id = ?`

// ForgetGeneration implements runner.HistoryProbe: the tenant's row of
// history_gens, 0 while it has none.
func (s *Store) ForgetGeneration(ctx context.Context, tenantID string) (gen int64, err error) {
	defer outage(&err)
	err = s.st.forgetGen.QueryRowContext(ctx, tenantID).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("runner/store/sqlite: forget generation of %s: %w", tenantID, err)
	}
	return gen, nil
}
