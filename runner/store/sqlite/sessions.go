package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ThreadSession returns the session of thread id for tenant: the session
// of the thread's runs (runs_thread; threads have no rows of their own
// since migration 7).
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (_ string, err error) {
	defer outage(&err)
	var session string
	err = s.st.threadSession.QueryRowContext(ctx, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", fmt.Errorf("runner/store/sqlite: thread: %w", err)
	}
	return session, nil
}
