package runner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

func startAndFinish(t *testing.T, e *env, sp runner.StartSpec) runner.Run {
	t.Helper()
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return h.Run()
}

func TestSessionAndThreadContinuation(t *testing.T) {
	e := newEnv(t)
	first := startAndFinish(t, e, spec("first", false))

	sp := spec("same session", false)
	sp.SessionID = first.SessionID
	second := startAndFinish(t, e, sp)
	if second.SessionID != first.SessionID || second.ThreadID == first.ThreadID {
		t.Fatalf("session continuation: session %s thread %s (first %s %s); want same session, new thread",
			second.SessionID, second.ThreadID, first.SessionID, first.ThreadID)
	}

	sp = spec("same thread", false)
	sp.ThreadID = first.ThreadID
	third := startAndFinish(t, e, sp)
	if third.SessionID != first.SessionID || third.ThreadID != first.ThreadID {
		t.Fatalf("thread continuation landed in %s/%s", third.SessionID, third.ThreadID)
	}

	sp = spec("both", false)
	sp.SessionID, sp.ThreadID = first.SessionID, first.ThreadID
	if both := startAndFinish(t, e, sp); both.ThreadID != first.ThreadID {
		t.Fatalf("session+thread continuation landed in thread %s", both.ThreadID)
	}

	fresh := startAndFinish(t, e, spec("fresh", false))
	if fresh.SessionID == first.SessionID {
		t.Fatal("a request without ids joined an existing session")
	}

	refused := []struct {
		name    string
		tenant  string
		session string
		thread  string
	}{
		{"thread in another session", "acme", fresh.SessionID, first.ThreadID},
		{"unknown session", "acme", "sess_unknown", ""},
		{"unknown thread", "acme", "", "thread_unknown"},
		{"other tenant's session", "globex", first.SessionID, ""},
		{"other tenant's thread", "globex", "", first.ThreadID},
	}
	before := e.countRuns(t)
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			sp := spec("x", false)
			sp.TenantID, sp.SessionID, sp.ThreadID = c.tenant, c.session, c.thread
			h, err := e.svc.Start(t.Context(), sp)
			wantErr(t, err, runner.ErrNotFound)
			if h != nil {
				t.Fatal("handle returned with an error")
			}
		})
	}
	if n := e.countRuns(t); n != before {
		t.Fatalf("refused continuations recorded %d runs", n-before)
	}
	if e.svc.InFlight() != 0 {
		t.Fatalf("refused starts hold %d slots", e.svc.InFlight())
	}
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	mine := startAndFinish(t, e, spec("mine", false))
	other := spec("theirs", false)
	other.TenantID = "globex"
	theirs := startAndFinish(t, e, other)

	if _, err := e.svc.Get(t.Context(), runner.Scope{TenantID: "globex"}, mine.ID); err == nil {
		t.Fatal("another tenant read the run")
	} else {
		wantErr(t, err, runner.ErrNotFound)
	}
	if _, err := e.svc.Get(t.Context(), acme, mine.ID); err != nil {
		t.Fatalf("own run: %v", err)
	}
	if _, err := e.svc.Get(t.Context(), runner.Scope{Admin: true}, theirs.ID); err != nil {
		t.Fatalf("admin read: %v", err)
	}
	// A scope without a tenant is not an admin.
	_, err := e.svc.Get(t.Context(), runner.Scope{}, mine.ID)
	wantErr(t, err, runner.ErrNotFound)
	if p, err := e.svc.List(t.Context(), runner.Scope{}, runner.ListQuery{}); err != nil || len(p.Data) != 0 {
		t.Fatalf("tenant-less scope listed %d runs (%v)", len(p.Data), err)
	}

	p, err := e.svc.List(t.Context(), acme, runner.ListQuery{TenantID: "globex"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data) != 1 || p.Data[0].ID != mine.ID {
		t.Fatalf("acme listing %v; a non-admin lists only its own tenant", p.Data)
	}
	p, err = e.svc.List(t.Context(), runner.Scope{Admin: true}, runner.ListQuery{})
	if err != nil || len(p.Data) != 2 {
		t.Fatalf("admin listing %d runs (%v), want 2", len(p.Data), err)
	}
	p, err = e.svc.List(t.Context(), runner.Scope{Admin: true}, runner.ListQuery{TenantID: "globex"})
	if err != nil || len(p.Data) != 1 || p.Data[0].ID != theirs.ID {
		t.Fatalf("admin listing of globex: %v (%v)", p.Data, err)
	}
}

func TestListPage(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for range 3 {
		ids = append(ids, startAndFinish(t, e, spec("hi", false)).ID)
	}
	slices.Reverse(ids)

	p, err := e.svc.List(t.Context(), acme, runner.ListQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Object != "list" || !p.HasMore || len(p.Data) != 2 || *p.FirstID != ids[0] || *p.LastID != ids[1] {
		t.Fatalf("first page %+v", p)
	}
	for _, r := range p.Data {
		if r.Object != "run" {
			t.Fatalf("run object %q", r.Object)
		}
	}
	p, err = e.svc.List(t.Context(), acme, runner.ListQuery{Limit: 2, After: *p.LastID})
	if err != nil || p.HasMore || len(p.Data) != 1 || p.Data[0].ID != ids[2] {
		t.Fatalf("second page %+v (%v)", p, err)
	}
	p, err = e.svc.List(t.Context(), acme, runner.ListQuery{Status: runner.StatusFailed})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	if string(b) != `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}` {
		t.Fatalf("empty page JSON %s", b)
	}
	_, err = e.svc.List(t.Context(), acme, runner.ListQuery{Status: "bogus"})
	wantErr(t, err, runner.ErrInvalidRequest)
}

func TestRunJSONShape(t *testing.T) {
	e := newEnv(t)
	r := e.get(t, startAndFinish(t, e, spec("hi", false)).ID)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "object", "status", "status_reason", "session_id", "thread_id", "actor",
		"tenant_id", "endpoint", "model", "created_at", "started_at", "ended_at", "usage", "error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("run JSON lacks %q: %s", k, b)
		}
	}
	if string(m["object"]) != `"run"` || string(m["error"]) != "null" {
		t.Errorf("run JSON %s", b)
	}
	if strings.Contains(string(b), "You said") {
		t.Errorf("output leaked into the run object: %s", b)
	}
}
