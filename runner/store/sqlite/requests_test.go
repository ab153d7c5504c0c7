package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

// A run's end does not write its recorded request again (migration 14):
// with the request in the runs row, SQLite rewrote the whole row, an
// agent-sized request with it, and the WAL took every page of it a
// second time. The request reads back whole after the end, and a purge
// leaves no row of it.
func TestRunEndLeavesItsRequestAlone(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runs.db")
	// No checkpoint during the test: the WAL only grows.
	s, err := OpenWith(ctx, path, Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var apart int
	req := []byte(`{"messages":[` + strings.Repeat(`{"role":"user","content":"`+strings.Repeat("x", 500)+`"},`, 400) + `{"role":"user","content":"hi"}]}`)
	r := markRun("run_big", "h")
	r.Request = req
	if err := s.StartRun(ctx, r, true, true); err != nil {
		t.Fatal(err)
	}
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM run_requests`).Scan(&apart); err != nil || apart != 1 {
		t.Fatalf("run_requests holds %d rows (%v) after a %d-byte request, want 1", apart, err, len(req))
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before, end := walSize(), int64(10)
	if err := s.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted, Output: "done", EndedAt: &end}); err != nil {
		t.Fatal(err)
	}
	// The end's frames: the run's page, its indexes', the mark's; the
	// request is 200 KB (50 pages).
	if grew := walSize() - before; grew > 64<<10 {
		t.Fatalf("the run's end appended %d bytes to the WAL for a %d-byte request: it wrote the request again", grew, len(req))
	}
	got, err := s.GetRun(ctx, "", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Request, req) || got.Status != runner.StatusCompleted {
		t.Fatalf("the ended run reads back %s with a %d-byte request, want completed with %d", got.Status, len(got.Request), len(req))
	}
	if n, err := s.PurgeBefore(ctx, 11); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1 run", n, err)
	}
	var left int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM run_requests`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after the purge run_requests holds %d rows (%v), want 0", left, err)
	}
}

// Reads, lists, leases, the response history's elision, deletes and
// purges behave alike with every request in run_requests (the store
// conformance suites run with the inline limit at zero).
func TestConformanceRequestsApart(t *testing.T) {
	open := func(t *testing.T) runner.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		s.apart = 0
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("runs", func(t *testing.T) { storetest.Run(t, open) })
	t.Run("leases", func(t *testing.T) { storetest.Leases(t, open) })
	t.Run("history", func(t *testing.T) { storetest.History(t, open) })
	t.Run("dedup", func(t *testing.T) {
		storetest.Dedup(t, open, func(t *testing.T, s runner.Store, runID string) int {
			var n int
			if err := s.(*Store).r.QueryRowContext(t.Context(), `SELECT count(*) FROM response_items WHERE run_id = ?`, runID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		})
	})
}

// ownRequestBytes is how many bytes the store keeps of run runID's
// request itself, in its row or run_requests'.
func ownRequestBytes(t *testing.T, s runner.Store, runID string) int {
	var n int
	if err := s.(*Store).r.QueryRowContext(t.Context(), `SELECT COALESCE(
		(SELECT length(CAST(q.request AS BLOB)) FROM run_requests q WHERE q.seq = r.seq), length(CAST(r.request AS BLOB)), 0)
		FROM runs r WHERE r.id = ?`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSharedRequests(t *testing.T) {
	open := func(t *testing.T) runner.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	storetest.SharedRequests(t, open, ownRequestBytes)
}
