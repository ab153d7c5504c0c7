package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CreateSession records a new session for tenant.
func (s *Store) CreateSession(ctx context.Context, id, tenantID string, createdAt int64) error {
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, tenant_id, created_at) VALUES (?, ?, ?)`, id, tenantID, createdAt)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create session: %w", err)
	}
	return nil
}

// SessionExists reports whether session id exists for tenant.
func (s *Store) SessionExists(ctx context.Context, tenantID, id string) (bool, error) {
	var one int
	err := s.r.QueryRowContext(ctx,
		`SELECT 1 FROM sessions WHERE id = ? AND tenant_id = ?`, id, tenantID).Scan(&one)
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
	res, err := s.w.ExecContext(ctx,
		`INSERT INTO threads (id, session_id, tenant_id, created_at)
		 SELECT ?, id, tenant_id, ? FROM sessions WHERE id = ? AND tenant_id = ?`,
		id, createdAt, sessionID, tenantID)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: create thread: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFound("session", sessionID)
	}
	return nil
}

// ThreadSession returns the session of thread id for tenant.
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (string, error) {
	var session string
	err := s.r.QueryRowContext(ctx,
		`SELECT session_id FROM threads WHERE id = ? AND tenant_id = ?`, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", fmt.Errorf("runner/store/sqlite: thread: %w", err)
	}
	return session, nil
}
