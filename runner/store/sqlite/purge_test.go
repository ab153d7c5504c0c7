package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
)

// A purge walks runs from its mark, not the whole table: a run below the
// mark (ended and purged), given output again behind the store's back,
// is not read again, so the next purge leaves it and counts nothing,
// while a run above the mark that ended before the cutoff is purged.
// Scanning every run for ended_at (before the mark) purges it again. The
// runs (storetest.BenchOwnRun) were created at 1_700_000_000 and end after.
func TestPurgeWalksFromItsMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	start := func() string {
		r := storetest.BenchOwnRun()
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	end := func(id string) {
		if err := s.Transition(t.Context(), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr64(1_700_000_100), Output: "answer", Lease: 1}); err != nil {
			t.Fatal(err)
		}
	}
	old := start()
	end(old)
	if n, err := s.PurgeBefore(t.Context(), 1_700_000_200); err != nil || n != 1 {
		t.Fatalf("PurgeBefore = %d, %v; want 1", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET output = 'behind its back' WHERE id = ?`, old); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newer := start()
	end(newer)
	if n, err := s.PurgeBefore(t.Context(), 1_700_000_200); err != nil || n != 1 {
		t.Fatalf("PurgeBefore after the mark = %d, %v; want 1 (the newer run only)", n, err)
	}
	if r, err := s.GetRun(t.Context(), "", old); err != nil || r.Output != "behind its back" {
		t.Fatalf("run below the mark: output %q, %v; want it not read again", r.Output, err)
	}
	if r, err := s.GetRun(t.Context(), "", newer); err != nil || r.Output != "" || r.Request != nil {
		t.Fatalf("newer run not purged: output %q request %q, %v", r.Output, r.Request, err)
	}
}

func ptr64(n int64) *int64 { return &n }

// A purge stops at the first run created at or after its cutoff: no run
// created later can have ended before it, so the walk reads the runs since
// the last purge, not every run not yet purged. A run that did end before
// its creation (a clock stepped back between two hosts) is not lost: the
// first purge whose cutoff passes its creation forgets it. Without the
// stop the first purge below forgets it at once.
func TestPurgeStopsAtRunsCreatedAfterItsCutoff(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func(created, ended int64) string {
		r := storetest.BenchOwnRun()
		r.CreatedAt = created
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
		if err := s.Transition(t.Context(), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr64(ended), Output: "answer", Lease: 1}); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	purged := func(id string) bool {
		r, err := s.GetRun(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Output == "" && r.Request == nil
	}
	old := run(1_000, 1_100)
	stepped := run(2_000, 1_200) // created after the cutoff below, ended before it
	if n, err := s.PurgeBefore(t.Context(), 1_500); err != nil || n != 1 {
		t.Fatalf("PurgeBefore(1500) = %d, %v; want 1 (the old run only)", n, err)
	}
	if !purged(old) || purged(stepped) {
		t.Fatalf("after the first purge: old purged %v, stepped purged %v; want true, false (the walk stops at the run created after its cutoff)", purged(old), purged(stepped))
	}
	if n, err := s.PurgeBefore(t.Context(), 2_500); err != nil || n != 1 || !purged(stepped) {
		t.Fatalf("PurgeBefore(2500) = %d, %v, stepped purged %v; want 1, the stepped run forgotten", n, err, purged(stepped))
	}
}
