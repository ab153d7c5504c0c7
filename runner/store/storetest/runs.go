package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

func testCreateAndGet(t *testing.T, s runner.Store) {
	want := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), want, false, false); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", ""} {
		got, err := s.GetRun(ctx(t), tenant, want.ID)
		if err != nil {
			t.Fatalf("GetRun(%q): %v", tenant, err)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Fatalf("GetRun(%q) =\n%+v\nwant\n%+v", tenant, got, *want)
		}
	}
	// A queued run without start time or request reads back with nils.
	q := newRun("acme", runner.StatusQueued)
	q.StartedAt, q.Request, q.Object = nil, nil, ""
	if err := s.StartRun(ctx(t), q, false, false); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, q.ID)
	if got.StartedAt != nil || got.EndedAt != nil || got.Usage != nil || got.Error != nil || got.Request != nil {
		t.Fatalf("queued run read back with values it was not given: %+v", got)
	}
	if got.Object != "run" {
		t.Fatalf("Object = %q, want \"run\" on every read", got.Object)
	}
}

func testCreateRefusesTerminalStatus(t *testing.T, s runner.Store) {
	for _, st := range []runner.Status{runner.StatusCompleted, runner.StatusFailed, runner.StatusCancelled, runner.StatusWaiting, "bogus"} {
		r := newRun("acme", st)
		if err := s.StartRun(ctx(t), r, false, false); err == nil {
			t.Errorf("StartRun with status %q succeeded; runs are created queued or running", st)
		}
		if _, err := s.GetRun(ctx(t), "", r.ID); !errors.Is(err, runner.ErrNotFound) {
			t.Errorf("refused run %q was stored (GetRun err %v)", st, err)
		}
	}
}

func testDuplicateRunID(t *testing.T, s runner.Store) {
	r := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), r, false, false); err != nil {
		t.Fatal(err)
	}
	dup := newRun("other", runner.StatusQueued)
	dup.ID = r.ID
	if err := s.StartRun(ctx(t), dup, false, false); err == nil {
		t.Fatal("second StartRun with the same id succeeded")
	}
	if got := mustGet(t, s, r.ID); got.TenantID != "acme" {
		t.Fatalf("duplicate insert changed the run: tenant %q", got.TenantID)
	}
}

func testSessionsAndThreads(t *testing.T, s runner.Store) {
	if err := s.StartRun(ctx(t), startRun("acme", "sess_1", "thread_1"), true, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.ThreadSession(ctx(t), "acme", "thread_1")
	if err != nil || got != "sess_1" {
		t.Fatalf("ThreadSession = %q, %v; want sess_1", got, err)
	}
	if _, err := s.ThreadSession(ctx(t), "acme", "thread_unknown"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession(unknown) err = %v, want ErrNotFound", err)
	}
	// The session exists: a second thread opens in it.
	if err := s.StartRun(ctx(t), startRun("acme", "sess_1", "thread_2"), false, true); err != nil {
		t.Fatalf("a new thread in an existing session: %v", err)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", "thread_2"); err != nil || got != "sess_1" {
		t.Fatalf("ThreadSession(thread_2) = %q, %v; want sess_1", got, err)
	}
	if sessionExists(t, s, "acme", "sess_unknown") {
		t.Fatal("a thread opened in an unknown session")
	}
	if err := s.StartRun(ctx(t), startRun("acme", "sess_1", "thread_3"), true, true); !errors.Is(err, runner.ErrSessionExists) {
		t.Fatalf("a new session with an existing id: %v, want ErrSessionExists", err)
	}
}

func testTenantIsolation(t *testing.T, s runner.Store) {
	r := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), r, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx(t), "globex", r.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("GetRun from another tenant: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetRun(ctx(t), "acme", "run_unknown"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("GetRun(unknown) err = %v, want ErrNotFound", err)
	}
	if err := s.StartRun(ctx(t), startRun("acme", "sess_a", "thread_a"), true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ThreadSession(ctx(t), "globex", "thread_a"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession from another tenant: err = %v, want ErrNotFound", err)
	}
	if sessionExists(t, s, "globex", "sess_a") {
		t.Fatal("globex opened a thread in acme's session")
	}
	runs, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: "globex"})
	if err != nil || len(runs) != 0 {
		t.Fatalf("ListRuns(globex) = %d runs, %v; want none", len(runs), err)
	}
}
