package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// BenchmarkHistoryCheck measures what a host asks the store before it
// uses a history it keeps, for a chain of 200 responses of two items
// each: the tenant's forget generation (one row, what every turn asks),
// the chain's counts (a host's first turn of a chain), and, for
// comparison, the count of the known responses' items by id that every
// turn asked before the generation (ItemCounts, its query as it was).
func BenchmarkHistoryCheck(b *testing.B) {
	path := filepath.Join(b.TempDir(), "runs.db")
	s, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const turns = 200
	var runs []string
	prev := ""
	for i := range turns {
		run := fmt.Sprintf("run_%04d", i)
		if err := s.BeginResponse(b.Context(), runner.ResponseRecord{RunID: run, TenantID: "acme", PreviousRunID: prev},
			[]runner.Item{{ID: "msg_in_" + run, RunID: run, Message: runner.Message{Role: "user", Content: "say"}}}); err != nil {
			b.Fatal(err)
		}
		if err := s.EndResponse(b.Context(), run, nil,
			[]runner.Item{{ID: "msg_out_" + run, RunID: run, Output: true, Message: runner.Message{Role: "assistant", Content: "said"}}}); err != nil {
			b.Fatal(err)
		}
		runs = append(runs, run)
		prev = run
	}
	b.Run("generation", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ForgetGeneration(b.Context(), "acme"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chain-counts", func(b *testing.B) {
		for b.Loop() {
			if n, _, _, err := s.ChainCounts(b.Context(), "acme", prev, runner.MaxTurns); err != nil || n != turns {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("item-counts-before", func(b *testing.B) {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		ids, _ := json.Marshal(runs)
		for b.Loop() {
			var items, with int
			if err := db.QueryRowContext(b.Context(), `SELECT COUNT(*), COUNT(DISTINCT i.run_id) FROM response_items i
				JOIN responses r ON r.run_id = i.run_id AND r.forgotten = 0
				WHERE i.run_id IN (SELECT value FROM json_each(?))`, string(ids)).Scan(&items, &with); err != nil || items != 2*turns {
				b.Fatal(items, err)
			}
		}
	})
}
