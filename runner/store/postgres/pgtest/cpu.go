package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerCPU returns a reading of the CPU time the PostgreSQL server of dsn
// has used so far, every process of it: the postmaster, its live children
// (backends, WAL writer, checkpointer, autovacuum) and the children it has
// reaped (its cutime and cstime), so a backend or autovacuum worker that
// ends between two readings still counts. It reads /proc, so it works
// for a server on this machine only (the test cluster); elsewhere the
// reading is always 0.
func ServerCPU(tb testing.TB, dsn string) func() time.Duration {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	var backend int32
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	f, err := procStat(int(backend))
	if err != nil {
		return func() time.Duration { return 0 }
	}
	postmaster := f[1] // the backend's parent
	return func() time.Duration {
		var ticks int64
		if f, err := procStat(int(postmaster)); err == nil {
			ticks += f[11] + f[12] + f[13] + f[14] // utime, stime, cutime, cstime
		}
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range stats {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			if f, err := procStat(pid); err == nil && f[1] == postmaster {
				ticks += f[11] + f[12]
			}
		}
		return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
}

// procStat returns the numeric fields of /proc/pid/stat after the
// command, from the state on (f[1] the parent, f[11] and f[12] utime and
// stime, f[13] and f[14] cutime and cstime, in clock ticks).
func procStat(pid int) ([]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	out := make([]int64, 15)
	for j := 1; j < 15; j++ {
		if out[j], err = strconv.ParseInt(fields[j], 10, 64); err != nil {
			return nil, fmt.Errorf("/proc/%d/stat: %q", pid, s)
		}
	}
	return out, nil
}
