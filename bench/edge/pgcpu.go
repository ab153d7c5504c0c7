package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgServer reads the CPU time of a local PostgreSQL server's processes, so
// that the report can say what the database costs per request beside what
// runedge does: with SQLite that work is inside runedge's own figure.
type pgServer struct{ conn *pgx.Conn }

func dialPG(ctx context.Context, dsn string) (*pgServer, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &pgServer{conn: c}, nil
}

// cpu returns the CPU time of every server process pg_stat_activity lists
// (client backends and the background processes: WAL writer, checkpointer),
// by pid. It reads /proc, so the server must run on this machine.
func (s *pgServer) cpu(ctx context.Context) (map[int]time.Duration, error) {
	rows, err := s.conn.Query(ctx, "SELECT pid FROM pg_stat_activity")
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	m := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if t, err := cpuTime(int(pid)); err == nil {
			m[int(pid)] = t
		}
	}
	return m, nil
}

// cpuSince is the CPU the server used between two readings: a process
// that started in between counts whole; one that ended is lost (runedge's
// pool keeps its connections, so under load that is rare).
func cpuSince(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}

// cpus returns the CPUs the server's processes may run on (its backend's
// Cpus_allowed_list), or "unknown".
func (s *pgServer) cpus(ctx context.Context) string {
	var pid int32
	if err := s.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return "unknown"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// vacuum vacuums and analyzes every table of the database now (VACUUM
// (ANALYZE, SKIP_LOCKED)), skipping a table whose lock another session
// holds rather than waiting behind that session, and returns
// how many times the server has vacuumed its user tables by hand so far,
// this time counted. bench-edge calls it after each PostgreSQL target's
// scenario, between targets, so that the upkeep of what that target
// wrote is done in its own turn. Left to autovacuum, it ran once a
// minute, one to two seconds of VACUUM and ANALYZE of the runs table on
// the load's core (where the server is pinned), in whichever target's
// interval the minute fell: the SQLite target's p99 added at one
// connection read 3.18 ms in that round against 0.70-1.14 ms in the
// others (RATIONALE.md "The fifth round").
func (s *pgServer) vacuum(ctx context.Context) (manual int64, err error) {
	if _, err := s.conn.Exec(ctx, "VACUUM (ANALYZE, SKIP_LOCKED)"); err != nil {
		return 0, err
	}
	if _, err := s.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, err
	}
	err = s.conn.QueryRow(ctx, "SELECT coalesce(sum(vacuum_count), 0)::bigint FROM pg_stat_user_tables").Scan(&manual)
	return manual, err
}

func (s *pgServer) close() { s.conn.Close(context.Background()) }
