package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

// startRun is newRun placed in session and thread.
func startRun(tenant, session, thread string) *runner.Run {
	r := newRun(tenant, runner.StatusRunning)
	r.SessionID, r.ThreadID = session, thread
	return r
}

// sessionExists reports whether session is tenant's, through what Store
// offers: StartRun opens a new thread only in an existing session of the
// run's tenant and is ErrNotFound otherwise, recording nothing. When the
// session exists the probe leaves a run and a thread behind, so tests use
// it where they expect false, or where the extra run does not matter.
func sessionExists(t *testing.T, s runner.Store, tenant, session string) bool {
	t.Helper()
	err := s.StartRun(ctx(t), startRun(tenant, session, runner.NewID("thread_probe_")), false, true)
	switch {
	case err == nil:
		return true
	case errors.Is(err, runner.ErrNotFound):
		return false
	}
	t.Fatalf("probing session %s of %s: %v", session, tenant, err)
	return false
}

// wantNoPlace fails unless neither session nor thread exists, for any of
// the tenants.
func wantNoPlace(t *testing.T, s runner.Store, session, thread string) {
	t.Helper()
	for _, tenant := range []string{"acme", "globex"} {
		if session != "" {
			if sessionExists(t, s, tenant, session) {
				t.Fatalf("session %s exists for %s after a refused start", session, tenant)
			}
		}
		if thread != "" {
			if _, err := s.ThreadSession(ctx(t), tenant, thread); !errors.Is(err, runner.ErrNotFound) {
				t.Fatalf("thread %s exists for %s (err %v) after a refused start", thread, tenant, err)
			}
		}
	}
}

// wantNoRun fails unless run id is absent.
func wantNoRun(t *testing.T, s runner.Store, id string) {
	t.Helper()
	if _, err := s.GetRun(ctx(t), "", id); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("run %s was stored by a refused start (GetRun err %v)", id, err)
	}
}

// testStartRunPlaces: StartRun opens a new session and thread, a new thread
// in an existing session, or neither, and records the run as given.
func testStartRunPlaces(t *testing.T, s runner.Store) {
	first := startRun("acme", "sess_s", "thread_s1")
	if err := s.StartRun(ctx(t), first, true, true); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, first.ID); !reflect.DeepEqual(got, *first) {
		t.Fatalf("GetRun =\n%+v\nwant\n%+v", got, *first)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", "thread_s1"); err != nil || got != "sess_s" {
		t.Fatalf("new thread: session %q, %v; want sess_s", got, err)
	}

	// The new session was recorded: a second thread opens in it.
	second := startRun("acme", "sess_s", "thread_s2")
	if err := s.StartRun(ctx(t), second, false, true); err != nil {
		t.Fatalf("new thread in an existing session: %v", err)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", "thread_s2"); err != nil || got != "sess_s" {
		t.Fatalf("second thread: session %q, %v; want sess_s", got, err)
	}
	third := startRun("acme", "sess_s", "thread_s1")
	if err := s.StartRun(ctx(t), third, false, false); err != nil {
		t.Fatalf("run in an existing thread: %v", err)
	}
	got, _ := list(t, s, runner.ListQuery{TenantID: "acme", SessionID: "sess_s"})
	if want := []string{third.ID, second.ID, first.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("runs of the session = %v, want %v", got, want)
	}
}

// testStartRunIsAtomic: when any part of a start fails, nothing of it is
// recorded. The run insert fails last (a duplicate id), after the session
// and thread rows were written in the same transaction.
func testStartRunIsAtomic(t *testing.T, s runner.Store) {
	existing := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), existing, false, false); err != nil {
		t.Fatal(err)
	}
	dup := startRun("acme", "sess_dup", "thread_dup")
	dup.ID = existing.ID
	if err := s.StartRun(ctx(t), dup, true, true); err == nil {
		t.Fatal("StartRun with a duplicate run id succeeded")
	}
	wantNoPlace(t, s, "sess_dup", "thread_dup")
	if got := mustGet(t, s, existing.ID); got.SessionID != existing.SessionID {
		t.Fatalf("refused start changed the existing run: session %q", got.SessionID)
	}

	// A new thread in an existing session is rolled back too.
	if err := s.StartRun(ctx(t), startRun("acme", "sess_keep", "thread_keep"), true, true); err != nil {
		t.Fatal(err)
	}
	dup = startRun("acme", "sess_keep", "thread_dup2")
	dup.ID = existing.ID
	if err := s.StartRun(ctx(t), dup, false, true); err == nil {
		t.Fatal("StartRun with a duplicate run id succeeded")
	}
	wantNoPlace(t, s, "", "thread_dup2")

	// A session id already taken fails the start before the run is written.
	r := startRun("acme", "sess_keep", "thread_new")
	if err := s.StartRun(ctx(t), r, true, true); err == nil {
		t.Fatal("StartRun reusing an existing session id as new succeeded")
	}
	wantNoRun(t, s, r.ID)
	wantNoPlace(t, s, "", "thread_new")

	// A status a run cannot be created in records nothing.
	r = startRun("acme", "sess_done", "thread_done")
	r.Status = runner.StatusCompleted
	if err := s.StartRun(ctx(t), r, true, true); err == nil {
		t.Fatal("StartRun of a completed run succeeded")
	}
	wantNoRun(t, s, r.ID)
	wantNoPlace(t, s, "sess_done", "thread_done")
}

// testStartRunTenantScoped: a new thread joins only a session of the run's
// own tenant; another tenant's (or an unknown) session is ErrNotFound and
// nothing is recorded.
func testStartRunTenantScoped(t *testing.T, s runner.Store) {
	if err := s.StartRun(ctx(t), startRun("acme", "sess_a", "thread_a"), true, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, tenant, session string }{
		{"another tenant's session", "globex", "sess_a"},
		{"unknown session", "acme", "sess_unknown"},
	} {
		r := startRun(c.tenant, c.session, "thread_x")
		if err := s.StartRun(ctx(t), r, false, true); !errors.Is(err, runner.ErrNotFound) {
			t.Fatalf("%s: err = %v, want ErrNotFound", c.name, err)
		}
		wantNoRun(t, s, r.ID)
		wantNoPlace(t, s, "", "thread_x")
	}
	// Session ids are global: globex cannot open a session under an id
	// acme holds, and so cannot come to share it.
	r := startRun("globex", "sess_a", "thread_g")
	if err := s.StartRun(ctx(t), r, true, true); err == nil {
		t.Fatal("globex opened a session with acme's session id")
	}
	wantNoRun(t, s, r.ID)
	if sessionExists(t, s, "globex", "sess_a") {
		t.Fatal("globex sees session sess_a")
	}
	if runs, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: "globex"}); err != nil || len(runs) != 0 {
		t.Fatalf("globex has %d runs (%v) after refused starts", len(runs), err)
	}
}
