package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/runedge/runedge/runner"
)

// The history probe (runner.HistoryProbe) lets a host keep replayed
// history between turns: each turn counts what the history holds, from
// the indexes alone (response_items_run, conversation_items_seq), instead
// of reading every message again.

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

// ConversationCount implements runner.HistoryProbe: a count over
// conversation_items_seq.
func (s *Store) ConversationCount(ctx context.Context, tenantID, sessionID, upTo string) (n int, err error) {
	defer outage(&err)
	err = s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversation_items
		WHERE session_id = ? AND seq <= (SELECT seq FROM conversation_items WHERE session_id = ? AND id = ?)
		AND EXISTS (SELECT 1 FROM conversations WHERE session_id = ? AND tenant_id = ? AND deleted = 0)`,
		sessionID, sessionID, upTo, sessionID, tenantID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("runner/store/sqlite: count conversation %s: %w", sessionID, err)
	}
	return n, nil
}

// ItemCounts implements runner.HistoryProbe: one lookup per response in
// response_items_run, the ids passed as one JSON array.
func (s *Store) ItemCounts(ctx context.Context, runIDs []string) (items, withItems int, err error) {
	defer outage(&err)
	ids, err := json.Marshal(runIDs)
	if err != nil {
		return 0, 0, err
	}
	err = s.r.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT i.run_id) FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND r.forgotten = 0
		WHERE i.run_id IN (SELECT value FROM json_each(?))`, string(ids)).Scan(&items, &withItems)
	if err != nil {
		return 0, 0, fmt.Errorf("runner/store/sqlite: count items: %w", err)
	}
	return items, withItems, nil
}
