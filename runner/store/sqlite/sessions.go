package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// insertThread runs insertThreadSQL through stmt (the Store's, or a
// transaction's copy of it). No row inserted means the session is not the
// tenant's.
func insertThread(ctx context.Context, stmt *sql.Stmt, id, sessionID, tenantID string, createdAt int64) error {
	res, err := stmt.ExecContext(ctx, id, createdAt, sessionID, tenantID)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create thread: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("runner/store/sqlite: create thread: %w", err)
	} else if n == 0 {
		return notFound("session", sessionID)
	}
	return nil
}

// ThreadSession returns the session of thread id for tenant.
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (string, error) {
	var session string
	err := s.st.threadSession.QueryRowContext(ctx, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", fmt.Errorf("runner/store/sqlite: thread: %w", err)
	}
	return session, nil
}
