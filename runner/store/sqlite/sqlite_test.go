package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
	_ "modernc.org/sqlite"
)

func openTemp(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLeases(t *testing.T) {
	storetest.Leases(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestHistory(t *testing.T) {
	storetest.History(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestConversations(t *testing.T) {
	storetest.Conversations(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestHistoryProbe(t *testing.T) {
	storetest.HistoryProbe(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestForgetGeneration(t *testing.T) {
	storetest.ForgetGeneration(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestResponseLink(t *testing.T) {
	storetest.ResponseLink(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestOpenCreatesDirectoryAndUsesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "deeper", "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	startSession1(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(mode, "wal") {
		t.Fatalf("journal_mode = %q, want wal", mode)
	}
	var version int
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil || version != sqlite.SchemaVersion() {
		t.Fatalf("schema version = %d, %v; want %d", version, err, sqlite.SchemaVersion())
	}
}

func TestReopenKeepsDataAndVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	startSession1(t, s)
	s.Close()
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got, err := s.ThreadSession(t.Context(), "acme", "thread_1"); err != nil || got != "sess_1" {
		t.Fatalf("thread lost on reopen: %q, %v", got, err)
	}
	if _, err := s.GetRun(t.Context(), "acme", "run_1"); err != nil {
		t.Fatalf("run lost on reopen: %v", err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := sqlite.Open(t.Context(), path); err == nil {
		s.Close()
		t.Fatal("Open accepted a database from a newer binary")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("error %q does not say the schema is newer", err)
	}
}

func TestOpenRefusesURIPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:runs.db", filepath.Join(t.TempDir(), "runs.db?mode=ro")} {
		if s, err := sqlite.Open(t.Context(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded; only plain paths are accepted", p)
		}
	}
}

func TestReadersDoNotWrite(t *testing.T) {
	s := openTemp(t)
	// A refused thread insert must not be mistaken for success even though
	// reads and writes use different connections.
	r := &runner.Run{ID: "run_1", Status: runner.StatusRunning, SessionID: "sess_missing", ThreadID: "thread_1", TenantID: "acme", CreatedAt: 1}
	if err := s.StartRun(t.Context(), r, false, true); err == nil {
		t.Fatal("thread created in a missing session")
	}
}

// The file holds every request's input and output: it is created 0600 in
// a 0700 directory, and an existing file is narrowed to 0600.
func TestFileIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	startSession1(t, s)
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
	s.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("reopened file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

// Concurrent writers share commits: 64 goroutines each starting and
// finishing runs take far fewer transactions than writes.
func TestGroupCommitBatches(t *testing.T) {
	s, err := sqlite.OpenWith(t.Context(), filepath.Join(t.TempDir(), "runs.db"), sqlite.Options{CommitWindow: 500 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 10 {
				r := &runner.Run{ID: runner.NewID("run_"), Status: runner.StatusRunning, TenantID: "acme", CreatedAt: 1}
				if err := s.StartRun(t.Context(), r, false, false); err != nil {
					t.Error(err)
					return
				}
				end := int64(2)
				if err := s.Transition(t.Context(), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	batches, writes := s.CommitStats()
	t.Logf("%d writes in %d commits", writes, batches)
	if writes < 1280 || batches*4 > writes {
		t.Fatalf("%d writes in %d commits: want at least 4 writes per commit on average", writes, batches)
	}
}

// startSession1 records run_1 in a new session sess_1 and thread thread_1
// of tenant acme: a write that goes through every table of a start.
func startSession1(t *testing.T, s *sqlite.Store) {
	t.Helper()
	r := &runner.Run{ID: "run_1", Status: runner.StatusRunning, SessionID: "sess_1", ThreadID: "thread_1", TenantID: "acme", CreatedAt: 1}
	if err := s.StartRun(t.Context(), r, true, true); err != nil {
		t.Fatal(err)
	}
}
