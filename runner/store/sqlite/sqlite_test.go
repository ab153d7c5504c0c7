package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

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

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestOpenCreatesDirectoryAndUsesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "deeper", "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(t.Context(), "sess_1", "acme", 1); err != nil {
		t.Fatal(err)
	}
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
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil || version != 4 {
		t.Fatalf("schema version = %d, %v; want 4", version, err)
	}
}

func TestReopenKeepsDataAndVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(t.Context(), "sess_1", "acme", 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if ok, err := s.SessionExists(t.Context(), "acme", "sess_1"); err != nil || !ok {
		t.Fatalf("session lost on reopen: %v, %v", ok, err)
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
	if err := s.CreateThread(t.Context(), "thread_1", "sess_missing", "acme", 1); err == nil {
		t.Fatal("thread created in a missing session")
	}
}
