package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// CreateSession records a new session for tenant.
func (s *Store) CreateSession(ctx context.Context, id, tenantID string, createdAt int64) error {
	err := s.writer.Do(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insertSessionSQL, id, tenantID, createdAt)
		return err
	})
	if err != nil {
		return wrap("create session", err)
	}
	return nil
}

// SessionExists reports whether session id exists for tenant.
func (s *Store) SessionExists(ctx context.Context, tenantID, id string) (bool, error) {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1 AND tenant_id = $2`, id, tenantID).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, wrap("session", err)
	}
	return true, nil
}

// CreateThread records a new thread in a session of tenant (ErrNotFound
// otherwise).
func (s *Store) CreateThread(ctx context.Context, id, sessionID, tenantID string, createdAt int64) error {
	err := s.writer.Do(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return insertThread(ctx, tx, id, sessionID, tenantID, createdAt)
	})
	if err != nil && !errors.Is(err, errNoSession) {
		return wrap("create thread", err)
	}
	if err != nil {
		return notFound("session", sessionID)
	}
	return nil
}

// errNoSession: the thread's session is unknown or another tenant's. It
// wraps ErrNotFound for StartRun's callers.
var errNoSession = notFound("session", "of the thread")

func insertThread(ctx context.Context, tx pgx.Tx, id, sessionID, tenantID string, createdAt int64) error {
	tag, err := tx.Exec(ctx, insertThreadSQL, id, createdAt, sessionID, tenantID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errNoSession
	}
	return nil
}

// ThreadSession returns the session of thread id for tenant.
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (string, error) {
	var session string
	err := s.pool.QueryRow(ctx, `SELECT session_id FROM threads WHERE id = $1 AND tenant_id = $2`, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", wrap("thread", err)
	}
	return session, nil
}
