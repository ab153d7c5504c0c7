package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/runedge/runedge/runner"
)

var _ runner.ConversationStore = (*Store)(nil)

// Conversations are written in transactions of their own on the writer
// connection (ownTx): they are rare next to runs, and a create or append
// must read the conversation it writes to.

// CreateConversation implements runner.ConversationStore.
func (s *Store) CreateConversation(ctx context.Context, c runner.Conversation, items []runner.ConversationItem) (err error) {
	defer outage(&err)
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (session_id, tenant_id, created_at, metadata)
			VALUES (?, ?, ?, ?)`, c.SessionID, c.TenantID, c.CreatedAt, string(c.Metadata)); err != nil {
			return err
		}
		return insertConvItems(ctx, tx, c.SessionID, items)
	})
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create conversation %s: %w", c.SessionID, err)
	}
	return nil
}

func insertConvItems(ctx context.Context, tx *wtx, session string, items []runner.ConversationItem) error {
	for _, it := range items {
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_items (session_id, id, data) VALUES (?, ?, ?)`,
			session, it.ID, string(it.Data)); err != nil {
			var se *sqlite.Error
			if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
				return &runner.DuplicateItemError{ID: it.ID}
			}
			return err
		}
	}
	return nil
}

// GetConversation implements runner.ConversationStore.
func (s *Store) GetConversation(ctx context.Context, tenantID, sessionID string) (_ runner.Conversation, err error) {
	defer outage(&err)
	return getConversation(ctx, stmtQueryer{s.st.getConversation}, tenantID, sessionID)
}

// stmtQueryer is a prepared statement as a queryer of its own query.
type stmtQueryer struct{ st *sql.Stmt }

func (q stmtQueryer) QueryRowContext(ctx context.Context, _ string, args ...any) *sql.Row {
	return q.st.QueryRowContext(ctx, args...)
}

// The statements of a conversation's turn (GetConversation, and
// ConversationItems from the start or after an item, oldest first), which
// the request path runs several times a turn; prepared (stmts.go).
const (
	getConversationSQL = `SELECT created_at, metadata FROM conversations
		WHERE session_id = ? AND tenant_id = ? AND deleted = 0`
	convItemSeqSQL    = `SELECT seq FROM conversation_items WHERE session_id = ? AND id = ?`
	convItemsSQL      = `SELECT id, data FROM conversation_items WHERE session_id = ? ORDER BY seq ASC LIMIT ?`
	convItemsAfterSQL = `SELECT id, data FROM conversation_items WHERE session_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`
)

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getConversation(ctx context.Context, q queryer, tenantID, sessionID string) (runner.Conversation, error) {
	c := runner.Conversation{SessionID: sessionID, TenantID: tenantID}
	var meta string
	err := q.QueryRowContext(ctx, getConversationSQL, sessionID, tenantID).Scan(&c.CreatedAt, &meta)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return c, notFound("conversation", sessionID)
	case err != nil:
		return c, fmt.Errorf("runner/store/sqlite: conversation %s: %w", sessionID, err)
	}
	c.Metadata = json.RawMessage(meta)
	return c, nil
}

// UpdateConversation implements runner.ConversationStore.
func (s *Store) UpdateConversation(ctx context.Context, tenantID, sessionID string, metadata json.RawMessage) (c runner.Conversation, err error) {
	defer outage(&err)
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET metadata = ?
			WHERE session_id = ? AND tenant_id = ? AND deleted = 0`, string(metadata), sessionID, tenantID); err != nil {
			return err
		}
		c, err = getConversation(ctx, tx, tenantID, sessionID)
		return err
	})
	return c, err
}

// DeleteConversation implements runner.ConversationStore.
func (s *Store) DeleteConversation(ctx context.Context, tenantID, sessionID string) (err error) {
	defer outage(&err)
	return s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE conversations SET deleted = 1, metadata = '{}'
			WHERE session_id = ? AND tenant_id = ? AND deleted = 0`, sessionID, tenantID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("conversation", sessionID)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM conversation_items WHERE session_id = ?`, sessionID)
		return err
	})
}

// AppendConversationItems implements runner.ConversationStore.
func (s *Store) AppendConversationItems(ctx context.Context, tenantID, sessionID string, items []runner.ConversationItem) (err error) {
	defer outage(&err)
	return s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := getConversation(ctx, tx, tenantID, sessionID); err != nil {
			return err
		}
		return insertConvItems(ctx, tx, sessionID, items)
	})
}

// ConversationItems implements runner.ConversationStore.
func (s *Store) ConversationItems(ctx context.Context, tenantID, sessionID, after string, limit int, desc bool) (_ []runner.ConversationItem, _ bool, err error) {
	defer outage(&err)
	if _, err := getConversation(ctx, stmtQueryer{s.st.getConversation}, tenantID, sessionID); err != nil {
		return nil, false, err
	}
	var seq int64
	if after != "" {
		err := s.st.convItemSeq.QueryRowContext(ctx, sessionID, after).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, notFound("conversation item", after)
		} else if err != nil {
			return nil, false, err
		}
	}
	var rows *sql.Rows
	switch {
	case desc:
		args := []any{sessionID}
		q := `SELECT id, data FROM conversation_items WHERE session_id = ?`
		if after != "" {
			q += ` AND seq < ?`
			args = append(args, seq)
		}
		rows, err = s.r.QueryContext(ctx, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit+1)...)
	case after == "":
		rows, err = s.st.convItems.QueryContext(ctx, sessionID, limit+1)
	default:
		rows, err = s.st.convItemsAfter.QueryContext(ctx, sessionID, seq, limit+1)
	}
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var items []runner.ConversationItem
	for rows.Next() {
		var it runner.ConversationItem
		var data string
		if err := rows.Scan(&it.ID, &data); err != nil {
			return nil, false, err
		}
		it.Data = json.RawMessage(data)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}

// GetConversationItem implements runner.ConversationStore.
func (s *Store) GetConversationItem(ctx context.Context, tenantID, sessionID, itemID string) (_ runner.ConversationItem, err error) {
	defer outage(&err)
	it := runner.ConversationItem{ID: itemID}
	var data string
	err = s.r.QueryRowContext(ctx, `SELECT i.data FROM conversation_items i
		JOIN conversations c ON c.session_id = i.session_id AND c.tenant_id = ? AND c.deleted = 0
		WHERE i.session_id = ? AND i.id = ?`, tenantID, sessionID, itemID).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return it, notFound("conversation item", itemID)
	}
	it.Data = json.RawMessage(data)
	return it, err
}

// DeleteConversationItem implements runner.ConversationStore.
func (s *Store) DeleteConversationItem(ctx context.Context, tenantID, sessionID, itemID string) (err error) {
	defer outage(&err)
	return s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM conversation_items WHERE session_id = ? AND id = ?
			AND EXISTS (SELECT 1 FROM conversations WHERE session_id = ? AND tenant_id = ? AND deleted = 0)`,
			sessionID, itemID, sessionID, tenantID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("conversation item", itemID)
		}
		return nil
	})
}
