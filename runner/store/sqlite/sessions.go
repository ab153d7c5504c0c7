package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runedge/runedge/internal/contract"
)

// ThreadSession returns the session of thread id for tenant: the session
// of the thread's runs (threads have no rows of their own since migration
// 7): of the run that opened it, found by its id, or of one that
// continued it (runs_thread, since migration 10 only those).
func (s *Store) ThreadSession(ctx context.Context, tenantID, id string) (_ string, err error) {
	defer outage(&err)
	var session string
	err = s.st.threadSession.QueryRowContext(ctx, contract.OpenerID(id), id, tenantID, id, tenantID).Scan(&session)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", notFound("thread", id)
	case err != nil:
		return "", fmt.Errorf("runner/store/sqlite: thread: %w", err)
	}
	return session, nil
}
