package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// cancelChannel is the NOTIFY channel of relayed cancels. One channel for
// the fleet, the payload says which host: host ids need not be valid
// channel names, and a host ignores the rest.
const cancelChannel = "runedge_cancel"

// RelayCancel notifies host hostID to cancel run runID. NOTIFY is
// delivered only to sessions listening now: a host that is down gets
// nothing, and recovers its runs as interrupted when it starts again.
func (s *Store) RelayCancel(ctx context.Context, hostID, runID string) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, cancelChannel, hostID+"\n"+runID); err != nil {
		return wrap("relay cancel", err)
	}
	return nil
}

// ListenCancels listens on its own connection (LISTEN needs a session
// that stays) and calls cancel for each run relayed to hostID until ctx
// ends. When the connection drops it reconnects, backing off to 1s.
func (s *Store) ListenCancels(ctx context.Context, hostID string, cancel func(runID string)) error {
	conn, err := s.listen(ctx)
	if err != nil {
		return err
	}
	go func() {
		backoff := 50 * time.Millisecond
		for {
			if conn != nil {
				s.deliver(ctx, conn, hostID, cancel)
				conn.Close(context.Background())
				conn = nil
			}
			if ctx.Err() != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if conn, err = s.listen(ctx); err != nil {
				backoff = min(2*backoff, time.Second)
				continue
			}
			backoff = 50 * time.Millisecond
		}
	}()
	return nil
}

func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, wrap("listen for cancels", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+cancelChannel); err != nil {
		conn.Close(context.Background())
		return nil, wrap("listen for cancels", err)
	}
	return conn, nil
}

// deliver hands notifications for hostID to cancel until the connection
// fails or ctx ends.
func (s *Store) deliver(ctx context.Context, conn *pgx.Conn, hostID string, cancel func(string)) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		host, run, ok := strings.Cut(n.Payload, "\n")
		if ok && host == hostID {
			cancel(run)
		}
	}
}
