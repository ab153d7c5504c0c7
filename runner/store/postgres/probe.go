package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/runedge/runedge/runner"
)

// The history probe (runner.HistoryProbe) lets a host keep replayed
// history between turns: each turn reads the tenant's forget generation,
// one row of history_gens, instead of reading every message again; a
// chain is counted, from the indexes (response_items_run), only when a
// host first keeps it.

var _ runner.HistoryProbe = (*Store)(nil)

// ChainCounts implements runner.HistoryProbe: it walks the chain as
// Conversation does and counts each response's items, reading no
// message. The chain's responses are the tenant's (previous_response_id
// is looked up in the tenant), so the items need no tenant check.
func (s *Store) ChainCounts(ctx context.Context, tenantID, runID string, maxTurns int) (turns, items, withItems int, err error) {
	err = s.pool.QueryRow(ctx, `WITH RECURSIVE chain(run_id, depth) AS (
			SELECT run_id, 0 FROM responses WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted
			UNION ALL
			SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
			WHERE r.previous_run_id != '' AND c.depth + 1 < $3
		), counted(n) AS (
			SELECT CASE WHEN NOT r.forgotten THEN (SELECT COUNT(*) FROM response_items i WHERE i.run_id = c.run_id) ELSE 0 END
			FROM chain c LEFT JOIN responses r ON r.run_id = c.run_id
		)
		SELECT COUNT(*)::int, COALESCE(SUM(n), 0)::int, COUNT(*) FILTER (WHERE n > 0)::int FROM counted`,
		runID, tenantID, maxTurns).Scan(&turns, &items, &withItems)
	if err != nil {
		return 0, 0, 0, wrap("chain of "+runID, err)
	}
	if turns == 0 {
		return 0, 0, 0, notFound("response of run", runID)
	}
	return turns, items, withItems, nil
}

// ForgetGeneration implements runner.HistoryProbe: the tenant's row of
// history_gens, 0 while it has none.
func (s *Store) ForgetGeneration(ctx context.Context, tenantID string) (int64, error) {
	var gen int64
	err := s.pool.QueryRow(ctx, `SELECT gen FROM history_gens WHERE tenant_id = $1`, tenantID).Scan(&gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("forget generation of "+tenantID, err)
	}
	return gen, nil
}
