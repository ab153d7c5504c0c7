package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

func TestDedup(t *testing.T) {
	storetest.Dedup(t, func(t *testing.T) runner.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T, s runner.Store, runID string) int {
		var n int
		if err := s.(*Store).r.QueryRowContext(t.Context(), `SELECT count(*) FROM response_items WHERE run_id = ?`, runID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
}

func TestOutputOnce(t *testing.T) {
	storetest.OutputOnce(t, func(t *testing.T) runner.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T, s runner.Store, runID string) string {
		var out string
		if err := s.(*Store).r.QueryRowContext(t.Context(), `SELECT output FROM runs WHERE id = ?`, runID).Scan(&out); err != nil {
			t.Fatal(err)
		}
		return out
	})
}
