package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
)

// openWithHistory opens a store whose runs table holds old runs that
// ended long ago (Unix times 1000 + i) and were purged already (no
// request, no output, their responses forgotten), inserted in bulk, then
// recent runs ended at 1_700_000_001 through the store's API.
func openWithHistory(b *testing.B, old, recent int) *sqlite.Store {
	b.Helper()
	path := filepath.Join(b.TempDir(), "runs.db")
	s, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO runs (id, status, session_id, thread_id, tenant_id, endpoint, created_at, started_at, ended_at, output)
		SELECT 'run_old' || i, 'completed', 'sess_old' || i, 'thread_old' || i, 'acme', '/v1/responses', 1000 + i, 1000 + i, 1000 + i, '' FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO responses (run_id, tenant_id, forgotten) SELECT 'run_old' || i, 'acme', 1 FROM n`,
	} {
		if _, err := db.Exec(q, old); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	s, err = sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	for range recent {
		storetest.CreateAndFinish(b, s, storetest.BenchOwnRun(), false, false)
	}
	return s
}

// BenchmarkPurgeBefore measures one PurgeBefore on a store whose history
// is old runs purged already plus a few hundred recent ones, none of
// which the cutoff reaches: the steady state of the background purge
// (after a first purge, untimed).
// cpu-ns/op is the process's CPU per purge; startrun-max-ms is the longest
// a StartRun issued in a loop alongside waited (the purge holds the
// writer), startrun-p50-ms its median.
func BenchmarkPurgeBefore(b *testing.B) {
	for _, old := range []int{10_000, 100_000} {
		b.Run("old="+strconv.Itoa(old), func(b *testing.B) {
			s := openWithHistory(b, old, 300)
			// A first purge, untimed: one that finds a mark to start from
			// where a store keeps one.
			if _, err := s.PurgeBefore(b.Context(), 1_600_000_000); err != nil {
				b.Fatal(err)
			}
			var (
				stop atomic.Bool
				wg   sync.WaitGroup
				lat  []time.Duration
			)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					r := storetest.BenchOwnRun()
					t0 := time.Now()
					if err := s.StartRun(b.Context(), r, false, false); err != nil {
						b.Error(err)
						return
					}
					lat = append(lat, time.Since(t0))
				}
			}()
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := s.PurgeBefore(b.Context(), 1_600_000_000); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cputime.Process() - cpu0
			stop.Store(true)
			wg.Wait()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			if len(lat) > 0 {
				var max time.Duration
				for _, d := range lat {
					max = maxDur(max, d)
				}
				b.ReportMetric(float64(max)/1e6, "startrun-max-ms")
			}
		})
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
