package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noSession reports the refusal of insertThreadSQL: the thread's session is
// unknown or another tenant's (a NULL session_id, SQLSTATE 23502).
func noSession(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23502" && pe.TableName == "threads"
}

// insertThread queues the thread insert, which fails on the server when
// the session is not the tenant's (see insertThreadSQL, noSession).
func insertThread(p *pipe, id, sessionID, tenantID string, createdAt int64) {
	p.exec(insertThreadSQL, id, createdAt, sessionID, tenantID)
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
