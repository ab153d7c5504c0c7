package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// A file written by a binary at schema version 1 (before attempts were
// recorded) opens, is brought forward, and its runs read attempts 0.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0],
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version (version) VALUES (1)`,
		`INSERT INTO runs (id, status, tenant_id, created_at) VALUES ('run_old', 'completed', 'acme', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.GetRun(t.Context(), "", "run_old")
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 0 || r.Status != "completed" {
		t.Fatalf("old run read back as %+v", r)
	}
	var version int
	if err := s.r.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil || version != len(migrations) {
		t.Fatalf("version %d (%v), want %d", version, err, len(migrations))
	}
}
