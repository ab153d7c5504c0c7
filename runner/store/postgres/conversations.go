package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/runedge/runedge/runner"
)

var _ runner.ConversationStore = (*Store)(nil)

// Conversations are written in transactions of their own (not through the
// group-commit writer): they are rare next to runs, and a create or append
// reads the conversation it writes to.

// CreateConversation implements runner.ConversationStore.
func (s *Store) CreateConversation(ctx context.Context, c runner.Conversation, items []runner.ConversationItem) error {
	return txErr("conversation", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO conversations (session_id, tenant_id, created_at, metadata)
			VALUES ($1, $2, $3, $4)`, c.SessionID, c.TenantID, c.CreatedAt, string(c.Metadata)); err != nil {
			return wrap("create conversation "+c.SessionID, err)
		}
		return insertConvItems(ctx, tx, c.SessionID, items)
	}))
}

func insertConvItems(ctx context.Context, tx pgx.Tx, session string, items []runner.ConversationItem) error {
	for _, it := range items {
		if _, err := tx.Exec(ctx, `INSERT INTO conversation_items (session_id, id, data) VALUES ($1, $2, $3)`,
			session, it.ID, string(it.Data)); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation: conversation_items_id
				return &runner.DuplicateItemError{ID: it.ID}
			}
			return wrap("conversation item "+it.ID, err)
		}
	}
	return nil
}

type rowQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getConversation(ctx context.Context, q rowQueryer, tenantID, sessionID string, lock bool) (runner.Conversation, error) {
	c := runner.Conversation{SessionID: sessionID, TenantID: tenantID}
	var meta string
	sql := `SELECT created_at, metadata FROM conversations WHERE session_id = $1 AND tenant_id = $2 AND NOT deleted`
	if lock {
		sql += ` FOR UPDATE`
	}
	err := q.QueryRow(ctx, sql, sessionID, tenantID).Scan(&c.CreatedAt, &meta)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return c, notFound("conversation", sessionID)
	case err != nil:
		return c, wrap("conversation "+sessionID, err)
	}
	c.Metadata = json.RawMessage(meta)
	return c, nil
}

// GetConversation implements runner.ConversationStore.
func (s *Store) GetConversation(ctx context.Context, tenantID, sessionID string) (runner.Conversation, error) {
	return getConversation(ctx, s.pool, tenantID, sessionID, false)
}

// UpdateConversation implements runner.ConversationStore.
func (s *Store) UpdateConversation(ctx context.Context, tenantID, sessionID string, metadata json.RawMessage) (runner.Conversation, error) {
	if _, err := s.pool.Exec(ctx, `UPDATE conversations SET metadata = $1
		WHERE session_id = $2 AND tenant_id = $3 AND NOT deleted`, string(metadata), sessionID, tenantID); err != nil {
		return runner.Conversation{}, wrap("update conversation "+sessionID, err)
	}
	return s.GetConversation(ctx, tenantID, sessionID)
}

// DeleteConversation implements runner.ConversationStore.
func (s *Store) DeleteConversation(ctx context.Context, tenantID, sessionID string) error {
	return txErr("conversation", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE conversations SET deleted = TRUE, metadata = '{}'
			WHERE session_id = $1 AND tenant_id = $2 AND NOT deleted`, sessionID, tenantID)
		if err != nil {
			return wrap("delete conversation "+sessionID, err)
		}
		if tag.RowsAffected() == 0 {
			return notFound("conversation", sessionID)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM conversation_items WHERE session_id = $1`, sessionID); err != nil {
			return wrap("delete conversation "+sessionID, err)
		}
		return nil
	}))
}

// AppendConversationItems implements runner.ConversationStore. The
// conversation's row is locked first, so concurrent appends to one
// conversation keep their order.
func (s *Store) AppendConversationItems(ctx context.Context, tenantID, sessionID string, items []runner.ConversationItem) error {
	return txErr("conversation", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := getConversation(ctx, tx, tenantID, sessionID, true); err != nil {
			return err
		}
		return insertConvItems(ctx, tx, sessionID, items)
	}))
}

// ConversationItems implements runner.ConversationStore.
func (s *Store) ConversationItems(ctx context.Context, tenantID, sessionID, after string, limit int, desc bool) ([]runner.ConversationItem, bool, error) {
	if _, err := s.GetConversation(ctx, tenantID, sessionID); err != nil {
		return nil, false, err
	}
	cmp, order := ">", "ASC"
	if desc {
		cmp, order = "<", "DESC"
	}
	args := []any{sessionID, limit + 1}
	q := `SELECT id, data FROM conversation_items WHERE session_id = $1`
	if after != "" {
		var seq int64
		err := s.pool.QueryRow(ctx, `SELECT seq FROM conversation_items WHERE session_id = $1 AND id = $2`, sessionID, after).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, notFound("conversation item", after)
		} else if err != nil {
			return nil, false, wrap("conversation items", err)
		}
		q += ` AND seq ` + cmp + ` $3`
		args = append(args, seq)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY seq `+order+` LIMIT $2`, args...)
	if err != nil {
		return nil, false, wrap("conversation items", err)
	}
	var items []runner.ConversationItem
	for rows.Next() {
		var it runner.ConversationItem
		var data string
		if err := rows.Scan(&it.ID, &data); err != nil {
			rows.Close()
			return nil, false, wrap("conversation items", err)
		}
		it.Data = json.RawMessage(data)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, false, wrap("conversation items", err)
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}

// GetConversationItem implements runner.ConversationStore.
func (s *Store) GetConversationItem(ctx context.Context, tenantID, sessionID, itemID string) (runner.ConversationItem, error) {
	it := runner.ConversationItem{ID: itemID}
	var data string
	err := s.pool.QueryRow(ctx, `SELECT i.data FROM conversation_items i
		JOIN conversations c ON c.session_id = i.session_id AND c.tenant_id = $1 AND NOT c.deleted
		WHERE i.session_id = $2 AND i.id = $3`, tenantID, sessionID, itemID).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return it, notFound("conversation item", itemID)
	} else if err != nil {
		return it, wrap("conversation item "+itemID, err)
	}
	it.Data = json.RawMessage(data)
	return it, nil
}

// DeleteConversationItem implements runner.ConversationStore.
func (s *Store) DeleteConversationItem(ctx context.Context, tenantID, sessionID, itemID string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM conversation_items WHERE session_id = $1 AND id = $2
		AND EXISTS (SELECT 1 FROM conversations WHERE session_id = $1 AND tenant_id = $3 AND NOT deleted)`,
		sessionID, itemID, tenantID)
	if err != nil {
		return wrap("delete conversation item "+itemID, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("conversation item", itemID)
	}
	return nil
}

// txErr is the error of a transaction: the store's own (not found, an
// outage already marked) as it is, any other (Begin or Commit failing on
// a cut connection) through wrap, which marks an outage.
func txErr(op string, err error) error {
	if err == nil || errors.Is(err, runner.ErrNotFound) || errors.Is(err, runner.ErrUnavailable) || errors.Is(err, runner.ErrDuplicateItem) {
		return err
	}
	return wrap(op, err)
}
