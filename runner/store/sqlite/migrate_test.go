package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

// A file written by a binary at schema version 1 (before attempts were
// recorded) opens, is brought forward, and its runs read attempts 0.
func TestMigrateFromVersion1(t *testing.T) {
	s := openAtVersion(t, 1,
		`INSERT INTO runs (id, status, tenant_id, created_at) VALUES ('run_old', 'completed', 'acme', 1)`)
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

// A file at schema version 6 (sessions and threads in tables of their own,
// runs with AUTOINCREMENT) is brought to 7: its runs keep their seq (list
// order) and every column, their sessions and threads can still be
// continued, start-up recovery still finds its live runs (from the mark
// migration 9 took from the partial index of 7), and new runs list after
// the old ones.
func TestMigrateFromVersion6(t *testing.T) {
	ctx := t.Context()
	s := openAtVersion(t, 6,
		`INSERT INTO sessions (id, tenant_id, created_at) VALUES ('sess_old', 'acme', 1)`,
		`INSERT INTO threads (id, session_id, tenant_id, created_at) VALUES ('thread_old', 'sess_old', 'acme', 1)`,
		`INSERT INTO runs (seq, id, status, session_id, thread_id, tenant_id, created_at, output, attempts, host_id, trace_id)
			VALUES (40, 'run_old', 'completed', 'sess_old', 'thread_old', 'acme', 1, 'hello', 2, 'h1', 'abc')`,
		`INSERT INTO runs (seq, id, status, session_id, thread_id, tenant_id, created_at, host_id)
			VALUES (41, 'run_live', 'running', 'sess_old', 'thread_old', 'acme', 2, 'h1')`,
	)
	r, err := s.GetRun(ctx, "acme", "run_old")
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != "hello" || r.Attempts != 2 || r.HostID != "h1" || r.TraceID != "abc" || r.SessionID != "sess_old" {
		t.Fatalf("old run read back as %+v", r)
	}
	if sess, err := s.ThreadSession(ctx, "acme", "thread_old"); err != nil || sess != "sess_old" {
		t.Fatalf("ThreadSession = %q, %v", sess, err)
	}
	if _, err := s.ThreadSession(ctx, "globex", "thread_old"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("another tenant's thread: %v", err)
	}
	started := int64(3)
	next := &runner.Run{ID: "run_new", Status: runner.StatusRunning, SessionID: "sess_old", ThreadID: "thread_new",
		TenantID: "acme", CreatedAt: 3, StartedAt: &started, HostID: "h2"}
	if err := s.StartRun(ctx, next, false, true); err != nil {
		t.Fatalf("a new thread in the migrated session: %v", err)
	}
	runs, _, err := s.ListRuns(ctx, runner.ListQuery{TenantID: "acme"})
	if err != nil || len(runs) != 3 || runs[0].ID != "run_new" || runs[2].ID != "run_old" {
		t.Fatalf("list after migration: %d runs, %v", len(runs), err)
	}
	// run_old's ids happen to be its own (sess_old, thread_old), so
	// migration 10 left it out of runs_session and runs_thread: the
	// lookups find it by its id, and the others through the indexes.
	runs, _, err = s.ListRuns(ctx, runner.ListQuery{TenantID: "acme", SessionID: "sess_old"})
	if err != nil || len(runs) != 3 || runs[0].ID != "run_new" || runs[1].ID != "run_live" || runs[2].ID != "run_old" {
		t.Fatalf("the migrated session's runs: %d, %v", len(runs), err)
	}
	var seq int64
	if err := s.r.QueryRow(`SELECT seq FROM runs WHERE id = 'run_new'`).Scan(&seq); err != nil || seq != 42 {
		t.Fatalf("new run's seq %d (%v), want 42", seq, err)
	}
	// Migration 9 took h1's mark from its live run; h2's first run gave it
	// one.
	for host, want := range map[string]int64{"h1": 41, "h2": 42} {
		var low int64
		if err := s.r.QueryRow(`SELECT low_seq FROM live_marks WHERE host_id = ?`, host).Scan(&low); err != nil || low != want {
			t.Fatalf("mark of %s = %d (%v), want %d", host, low, err, want)
		}
	}
	if n, err := s.MarkInterrupted(ctx, "h1", 9); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted(h1) = %d, %v; want run_live only", n, err)
	}
	var plan string
	if err := s.r.QueryRow(`EXPLAIN QUERY PLAN SELECT id FROM runs WHERE seq >= 41 AND status IN ('queued', 'running') AND host_id IN ('h1', '')`).Scan(new(int), new(int), new(int), &plan); err != nil || !strings.Contains(plan, "INTEGER PRIMARY KEY (rowid>?)") {
		t.Fatalf("recovery's plan %q (%v) does not scan from the mark", plan, err)
	}
	for _, gone := range []string{"sessions", "threads", "runs7", "runs_live"} {
		var n int
		if err := s.r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, gone).Scan(&n); err != nil || n != 0 {
			t.Fatalf("table %s: %d (%v)", gone, n, err)
		}
	}
}

// A file at schema version 14 is brought to the current one (16 keeps a
// run's output text once): a run that keeps its text reads it as before, and a response's
// final object compacted the earlier way (its output text only) reads
// back byte for byte.
func TestMigrateFromVersion14(t *testing.T) {
	text := strings.Repeat("an answer of some length; ", 4)
	s := openAtVersion(t, 14,
		`INSERT INTO runs (id, status, tenant_id, created_at, ended_at, output) VALUES ('run_old', 'completed', 'acme', 1, 2, '`+text+`')`,
		`INSERT INTO responses (run_id, tenant_id, echo, object) VALUES ('run_old', 'acme', '{"store":true}', char(1) || '{"id":"resp_old","store":true,"output_text":' || char(2) || '}')`,
		`INSERT INTO response_items (id, run_id, tenant_id, position, output, message) VALUES ('msg_old', 'run_old', 'acme', 0, 1, '{"role":"assistant","content":"`+text+`"}')`,
	)
	if r, err := s.GetRun(t.Context(), "acme", "run_old"); err != nil || r.Output != text {
		t.Fatalf("old run: %q, %v", r.Output, err)
	}
	rec, err := s.GetResponse(t.Context(), "acme", "run_old")
	if want := `{"id":"resp_old","store":true,"output_text":"` + text + `"}`; err != nil || string(rec.Object) != want {
		t.Fatalf("old object: %s, %v; want %s", rec.Object, err, want)
	}
}

// openAtVersion writes a file at schema version v (the first v
// migrations) holding what seed inserts, then opens it, which migrates it
// to the current version; the store is closed when the test ends.
func openAtVersion(t *testing.T, v int, seed ...string) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v"+strconv.Itoa(v)+".db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	qs := append(append([]string{}, migrations[:v]...),
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version (version) VALUES (`+strconv.Itoa(v)+`)`)
	for _, q := range append(qs, seed...) {
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
	t.Cleanup(func() { s.Close() })
	return s
}
