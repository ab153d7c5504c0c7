package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CreateSession records a new session for tenant.
func (s *Store) CreateSession(ctx context.Context, id, tenantID string, createdAt int64) error {
	err := s.writer.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.st.insertSession).ExecContext(ctx, id, tenantID, createdAt)
		return err
	})
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create session: %w", err)
	}
	return nil
}

// SessionExists reports whether session id exists for tenant.
func (s *Store) SessionExists(ctx context.Context, tenantID, id string) (bool, error) {
	var one int
	err := s.st.sessionExists.QueryRowContext(ctx, id, tenantID).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("runner/store/sqlite: session: %w", err)
	}
	return true, nil
}

// CreateThread records a new thread in a session. The session must belong
// to tenant (ErrNotFound otherwise), so a thread can never join another
// tenant's session.
func (s *Store) CreateThread(ctx context.Context, id, sessionID, tenantID string, createdAt int64) error {
	return s.writer.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return insertThread(ctx, tx.StmtContext(ctx, s.st.insertThread), id, sessionID, tenantID, createdAt)
	})
}

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
