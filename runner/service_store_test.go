package runner_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// callLog wraps a Store and records which methods the service calls, in
// order, with StartRun's flags.
type callLog struct {
	runner.Store
	mu    sync.Mutex
	calls []string
}

func (c *callLog) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, name)
}

func (c *callLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func (c *callLog) ThreadSession(ctx context.Context, tenantID, id string) (string, error) {
	c.add("ThreadSession")
	return c.Store.ThreadSession(ctx, tenantID, id)
}

func (c *callLog) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	name := "StartRun"
	if newSession {
		name += "+session"
	}
	if newThread {
		name += "+thread"
	}
	c.add(name)
	return c.Store.StartRun(ctx, r, newSession, newThread)
}

func (c *callLog) Transition(ctx context.Context, id string, t runner.Transition) error {
	c.add("Transition")
	return c.Store.Transition(ctx, id, t)
}

func (c *callLog) GetRun(ctx context.Context, tenantID, id string) (runner.Run, error) {
	c.add("GetRun")
	return c.Store.GetRun(ctx, tenantID, id)
}

// TestStoreCallsPerRun pins the store work of one request, the largest
// share of its latency: a start is one write (plus, for a continued thread,
// the read that finds its session), and the outcome one more. A new
// session, thread and run written separately would be three commits, and
// a lookup before writing into a continued session a wasted round trip.
func TestStoreCallsPerRun(t *testing.T) {
	e := newEnv(t)
	log := &callLog{Store: e.store}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: log, Agent: agent.New(offline.New(offline.Config{}))})
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, sp runner.StartSpec, want ...string) runner.Run {
		t.Helper()
		log.take()
		h, err := svc.Start(t.Context(), sp)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
		if got := log.take(); !slices.Equal(got, want) {
			t.Fatalf("store calls %v, want %v", got, want)
		}
		return h.Run()
	}

	// A session and thread the service made up are not checked as new:
	// their ids are fresh from NewID.
	first := run(t, spec("new", false), "StartRun", "Transition")
	sp := spec("same session", false)
	sp.SessionID = first.SessionID
	run(t, sp, "StartRun+thread", "Transition")
	sp = spec("same thread", false)
	sp.ThreadID = first.ThreadID
	run(t, sp, "ThreadSession", "StartRun", "Transition")

	// An unknown session is refused by the write itself, which leaves
	// nothing behind.
	sp = spec("unknown session", false)
	sp.SessionID = "sess_unknown"
	if _, err := svc.Start(t.Context(), sp); err == nil {
		t.Fatal("Start into an unknown session succeeded")
	}
	if got, want := log.take(), []string{"StartRun+thread"}; !slices.Equal(got, want) {
		t.Fatalf("store calls %v, want %v", got, want)
	}
}
