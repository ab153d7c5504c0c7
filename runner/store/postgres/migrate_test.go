package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

// A database at schema version 6 (sessions and threads in tables of their
// own) is brought to 7: its runs stay, their sessions and threads can be
// continued, another tenant still cannot, and start-up recovery finds the
// live run.
func TestMigrateFromVersion6(t *testing.T) {
	ctx := t.Context()
	s := openAtVersion(t, 6,
		`INSERT INTO sessions (id, tenant_id, created_at) VALUES ('sess_old', 'acme', 1)`,
		`INSERT INTO threads (id, session_id, tenant_id, created_at) VALUES ('thread_old', 'sess_old', 'acme', 1)`,
		`INSERT INTO runs (id, status, session_id, thread_id, tenant_id, created_at, output, host_id)
			VALUES ('run_old', 'completed', 'sess_old', 'thread_old', 'acme', 1, 'hello', 'h1')`,
		`INSERT INTO runs (id, status, session_id, thread_id, tenant_id, created_at, host_id)
			VALUES ('run_live', 'running', 'sess_old', 'thread_old', 'acme', 2, 'h1')`,
	)
	if r, err := s.GetRun(ctx, "acme", "run_old"); err != nil || r.Output != "hello" || r.ThreadID != "thread_old" {
		t.Fatalf("old run: %+v, %v", r, err)
	}
	if sess, err := s.ThreadSession(ctx, "acme", "thread_old"); err != nil || sess != "sess_old" {
		t.Fatalf("ThreadSession = %q, %v", sess, err)
	}
	started := int64(3)
	in := func(tenant, id string) *runner.Run {
		return &runner.Run{ID: id, Status: runner.StatusRunning, SessionID: "sess_old", ThreadID: runner.NewID("thread_"),
			TenantID: tenant, CreatedAt: 3, StartedAt: &started, HostID: "h2"}
	}
	if err := s.StartRun(ctx, in("globex", "run_g"), false, true); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("globex in acme's migrated session: %v", err)
	}
	if err := s.StartRun(ctx, in("acme", "run_new"), false, true); err != nil {
		t.Fatalf("a new thread in the migrated session: %v", err)
	}
	if n, err := s.MarkInterrupted(ctx, "h1", 9); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted(h1) = %d, %v; want run_live only", n, err)
	}
}

// A database at schema version 14 is brought to the current one (16
// keeps a run's output text once): a run that keeps its text reads it as before, and a
// response's final object compacted the earlier way (its output text
// only) reads back byte for byte.
func TestMigrateFromVersion14(t *testing.T) {
	ctx := t.Context()
	text := strings.Repeat("an answer of some length; ", 4)
	s := openAtVersion(t, 14,
		`INSERT INTO runs (id, status, tenant_id, created_at, ended_at, output) VALUES ('run_old', 'completed', 'acme', 1, 2, '`+text+`')`,
		`INSERT INTO responses (run_id, tenant_id, echo, object) VALUES ('run_old', 'acme', '{"store":true}', chr(1) || '{"id":"resp_old","store":true,"output_text":' || chr(2) || '}')`,
		`INSERT INTO response_items (id, run_id, tenant_id, position, output, message) VALUES ('msg_old', 'run_old', 'acme', 0, TRUE, '{"role":"assistant","content":"`+text+`"}')`,
	)
	if r, err := s.GetRun(ctx, "acme", "run_old"); err != nil || r.Output != text {
		t.Fatalf("old run: %q, %v", r.Output, err)
	}
	rec, err := s.GetResponse(ctx, "acme", "run_old")
	if want := `{"id":"resp_old","store":true,"output_text":"` + text + `"}`; err != nil || string(rec.Object) != want {
		t.Fatalf("old object: %s, %v; want %s", rec.Object, err, want)
	}
}

// openAtVersion brings a new schema to version v (the first v
// migrations) holding what seed inserts, then opens it, which migrates it
// to the current version; the store is closed when the test ends.
func openAtVersion(t *testing.T, v int, seed ...string) *Store {
	t.Helper()
	s, err := Open(t.Context(), schemaAt(t, v, seed...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
