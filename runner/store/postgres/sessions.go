package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noSession reports the refusal of a run's session check (see
// insertRunNewSessionSQL): a NULL session id (SQLSTATE 23502).
func noSession(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23502" && pe.TableName == "runs" && pe.ColumnName == "session_id"
}

// ThreadSession returns the session of thread id for tenant: the session
// of the thread's runs (threads have no rows of their own since
// migration 7).
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (string, error) {
	var session string
	err := s.pool.QueryRow(ctx, `SELECT session_id FROM runs WHERE thread_id = $1 AND tenant_id = $2 LIMIT 1`, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", wrap("thread", err)
	}
	return session, nil
}
