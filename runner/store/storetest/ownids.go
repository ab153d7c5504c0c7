package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// openOwn is a run of tenant that opens its own session and thread, as the
// service starts a run whose client names neither: their ids are the run's
// (contract.OwnSessionID, OwnThreadID), and neither is checked.
func openOwn(t *testing.T, s runner.Store, tenant string) *runner.Run {
	t.Helper()
	r := newRun(tenant, runner.StatusRunning)
	r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
	if err := s.StartRun(ctx(t), r, false, false); err != nil {
		t.Fatalf("StartRun (own session and thread): %v", err)
	}
	return r
}

// inSession starts a run of tenant that opens its own thread in session,
// as the service continues a session: the session is checked as the
// tenant's and the thread as new.
func inSession(t *testing.T, s runner.Store, tenant, session string) (*runner.Run, error) {
	t.Helper()
	r := newRun(tenant, runner.StatusRunning)
	r.SessionID, r.ThreadID = session, contract.OwnThreadID(r.ID)
	return r, s.StartRun(ctx(t), r, false, true)
}

// testOwnIDs: a session and thread named after the run that opened them
// are found, continued, listed and refused exactly as any other. A store
// may find them through that run instead of an index (the SQLite store
// does, migration 10), so this walks every lookup by session and thread
// with the opener, with the runs that continued it, and with a run whose
// id names a session it did not open.
func testOwnIDs(t *testing.T, s runner.Store) {
	a := openOwn(t, s, "acme")
	sess, threadA := a.SessionID, a.ThreadID
	if got, err := s.ThreadSession(ctx(t), "acme", threadA); err != nil || got != sess {
		t.Fatalf("ThreadSession(opener's thread) = %q, %v; want %s", got, err, sess)
	}
	if _, err := s.ThreadSession(ctx(t), "globex", threadA); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession of another tenant's thread: %v, want ErrNotFound", err)
	}

	// Another tenant cannot open a thread in it; nothing is recorded.
	// (First, while the opener is the session's only run.)
	g, err := inSession(t, s, "globex", sess)
	if !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("another tenant's thread in the session: %v, want ErrNotFound", err)
	}
	wantNoRun(t, s, g.ID)

	// Continued: the session with a thread of its own, then the thread.
	c, err := inSession(t, s, "acme", sess)
	if err != nil {
		t.Fatalf("a new thread in the opener's session: %v", err)
	}
	b := startRun("acme", sess, threadA)
	if err := s.StartRun(ctx(t), b, false, false); err != nil {
		t.Fatalf("continue the thread: %v", err)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", c.ThreadID); err != nil || got != sess {
		t.Fatalf("ThreadSession(new thread in session) = %q, %v; want %s", got, err, sess)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", threadA); err != nil || got != sess {
		t.Fatalf("ThreadSession(opener's thread, continued) = %q, %v; want %s", got, err, sess)
	}

	// Listed newest first, the opener last, paged and filtered.
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", SessionID: sess}); !slices.Equal(got, []string{b.ID, c.ID, a.ID}) || more {
		t.Fatalf("ListRuns(session) = %v (more %v), want %v", got, more, []string{b.ID, c.ID, a.ID})
	}
	if got, more := list(t, s, runner.ListQuery{SessionID: sess, Limit: 2}); !slices.Equal(got, []string{b.ID, c.ID}) || !more {
		t.Fatalf("ListRuns(session, limit 2) = %v (more %v), want [%s %s] (more)", got, more, b.ID, c.ID)
	}
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", SessionID: sess, After: c.ID, Limit: 2}); !slices.Equal(got, []string{a.ID}) || more {
		t.Fatalf("ListRuns(session, after %s) = %v (more %v), want [%s]", c.ID, got, more, a.ID)
	}
	if got, _ := list(t, s, runner.ListQuery{TenantID: "globex", SessionID: sess}); len(got) != 0 {
		t.Fatalf("ListRuns(session) of another tenant = %v, want none", got)
	}
	ended := int64(1_700_000_100)
	if err := s.Transition(ctx(t), a.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &ended}); err != nil {
		t.Fatal(err)
	}
	if got, _ := list(t, s, runner.ListQuery{SessionID: sess, Status: runner.StatusCompleted}); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("ListRuns(session, completed) = %v, want [%s]", got, a.ID)
	}
	if got, _ := list(t, s, runner.ListQuery{SessionID: sess, Status: runner.StatusRunning}); !slices.Equal(got, []string{b.ID, c.ID}) {
		t.Fatalf("ListRuns(session, running) = %v, want [%s %s]", got, b.ID, c.ID)
	}

	// Taken ids are refused, the opener's as much as any other: also a
	// session and thread whose only run is their opener.
	lone := openOwn(t, s, "acme")
	for name, r := range map[string]*runner.Run{
		"a lone opener's session as new": startRun("acme", lone.SessionID, runner.NewID("thread_")),
		"a lone opener's thread as new":  startRun("acme", runner.NewID("sess_"), lone.ThreadID),
		"the opener's session as new":    startRun("acme", sess, runner.NewID("thread_")),
		"the opener's thread as new":     startRun("acme", runner.NewID("sess_"), threadA),
		"a continuer's thread as new":    startRun("acme", runner.NewID("sess_"), c.ThreadID),
	} {
		if err := s.StartRun(ctx(t), r, true, true); err == nil {
			t.Fatalf("%s: StartRun succeeded, want refused", name)
		}
		wantNoRun(t, s, r.ID)
	}
	r := startRun("acme", sess, threadA)
	if err := s.StartRun(ctx(t), r, false, true); err == nil {
		t.Fatal("the opener's thread as a new thread in its session: StartRun succeeded, want refused")
	}
	wantNoRun(t, s, r.ID)

	// c's id names a session c did not open (it continued sess): that
	// session is free, and once a client names it, c is not among its
	// runs. c's own thread is still sess's.
	free := contract.OwnSessionID(c.ID)
	d := startRun("acme", free, runner.NewID("thread_"))
	if err := s.StartRun(ctx(t), d, true, true); err != nil {
		t.Fatalf("a session named after a run that did not open it: %v", err)
	}
	if got, _ := list(t, s, runner.ListQuery{SessionID: free}); !slices.Equal(got, []string{d.ID}) {
		t.Fatalf("ListRuns(%s) = %v, want [%s]", free, got, d.ID)
	}
	if got, err := s.ThreadSession(ctx(t), "acme", c.ThreadID); err != nil || got != sess {
		t.Fatalf("ThreadSession(%s) = %q, %v; want %s", c.ThreadID, got, err, sess)
	}
	if _, err := s.ThreadSession(ctx(t), "acme", contract.OwnThreadID(d.ID)); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("ThreadSession of the thread d's id names but d did not open: %v, want ErrNotFound", err)
	}
}
