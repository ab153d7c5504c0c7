package postgres

import (
	"context"

	"github.com/runedge/runedge/runner"
)

// The history probe (runner.HistoryProbe) lets a host keep replayed
// history between turns: each turn counts what the history holds, from
// the indexes (response_items_run, conversation_items_seq), instead of
// reading every message again.

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

// ConversationCount implements runner.HistoryProbe: a count over
// conversation_items_seq.
func (s *Store) ConversationCount(ctx context.Context, tenantID, sessionID, upTo string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*)::int FROM conversation_items
		WHERE session_id = $1 AND seq <= (SELECT seq FROM conversation_items WHERE session_id = $1 AND id = $2)
		AND EXISTS (SELECT 1 FROM conversations WHERE session_id = $1 AND tenant_id = $3 AND NOT deleted)`,
		sessionID, upTo, tenantID).Scan(&n)
	if err != nil {
		return 0, wrap("count conversation "+sessionID, err)
	}
	return n, nil
}

// ItemCounts implements runner.HistoryProbe: one lookup per response in
// response_items_run.
func (s *Store) ItemCounts(ctx context.Context, runIDs []string) (items, withItems int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COUNT(*)::int, COUNT(DISTINCT i.run_id)::int FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND NOT r.forgotten
		WHERE i.run_id = ANY($1)`, runIDs).Scan(&items, &withItems)
	if err != nil {
		return 0, 0, wrap("count items", err)
	}
	return items, withItems, nil
}
