package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

func testCreateAndGet(t *testing.T, s runner.Store) {
	want := newRun("acme", runner.StatusRunning)
	if err := s.CreateRun(ctx(t), want); err != nil {
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
	if err := s.CreateRun(ctx(t), q); err != nil {
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
		if err := s.CreateRun(ctx(t), r); err == nil {
			t.Errorf("CreateRun with status %q succeeded; runs are created queued or running", st)
		}
		if _, err := s.GetRun(ctx(t), "", r.ID); !errors.Is(err, runner.ErrNotFound) {
			t.Errorf("refused run %q was stored (GetRun err %v)", st, err)
		}
	}
}

func testDuplicateRunID(t *testing.T, s runner.Store) {
	r := newRun("acme", runner.StatusRunning)
	if err := s.CreateRun(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	dup := newRun("other", runner.StatusQueued)
	dup.ID = r.ID
	if err := s.CreateRun(ctx(t), dup); err == nil {
		t.Fatal("second CreateRun with the same id succeeded")
	}
	if got := mustGet(t, s, r.ID); got.TenantID != "acme" {
		t.Fatalf("duplicate insert changed the run: tenant %q", got.TenantID)
	}
}

func testSessionsAndThreads(t *testing.T, s runner.Store) {
	if err := s.CreateSession(ctx(t), "sess_1", "acme", 100); err != nil {
		t.Fatal(err)
	}
	ok, err := s.SessionExists(ctx(t), "acme", "sess_1")
	if err != nil || !ok {
		t.Fatalf("SessionExists(acme, sess_1) = %v, %v; want true", ok, err)
	}
	if ok, err := s.SessionExists(ctx(t), "acme", "sess_unknown"); err != nil || ok {
		t.Fatalf("SessionExists(unknown) = %v, %v; want false, nil", ok, err)
	}
	if err := s.CreateThread(ctx(t), "thread_1", "sess_1", "acme", 101); err != nil {
		t.Fatal(err)
	}
	got, err := s.ThreadSession(ctx(t), "acme", "thread_1")
	if err != nil || got != "sess_1" {
		t.Fatalf("ThreadSession = %q, %v; want sess_1", got, err)
	}
	if _, err := s.ThreadSession(ctx(t), "acme", "thread_unknown"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession(unknown) err = %v, want ErrNotFound", err)
	}
	if err := s.CreateThread(ctx(t), "thread_2", "sess_unknown", "acme", 101); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("CreateThread in an unknown session: err = %v, want ErrNotFound", err)
	}
	if err := s.CreateSession(ctx(t), "sess_1", "acme", 100); err == nil {
		t.Fatal("CreateSession with an existing id succeeded")
	}
}

func testTenantIsolation(t *testing.T, s runner.Store) {
	r := newRun("acme", runner.StatusRunning)
	if err := s.CreateRun(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx(t), "globex", r.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("GetRun from another tenant: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetRun(ctx(t), "acme", "run_unknown"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("GetRun(unknown) err = %v, want ErrNotFound", err)
	}
	if err := s.CreateSession(ctx(t), "sess_a", "acme", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx(t), "thread_a", "sess_a", "acme", 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SessionExists(ctx(t), "globex", "sess_a"); err != nil || ok {
		t.Fatalf("SessionExists from another tenant = %v, %v; want false", ok, err)
	}
	if _, err := s.ThreadSession(ctx(t), "globex", "thread_a"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession from another tenant: err = %v, want ErrNotFound", err)
	}
	if err := s.CreateThread(ctx(t), "thread_g", "sess_a", "globex", 1); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("CreateThread into another tenant's session: err = %v, want ErrNotFound", err)
	}
	runs, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: "globex"})
	if err != nil || len(runs) != 0 {
		t.Fatalf("ListRuns(globex) = %d runs, %v; want none", len(runs), err)
	}
}
