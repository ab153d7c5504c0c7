package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// stubborn is an agent that ignores its context: it returns only when
// release closes, as a validation pinned on a hostile schema would.
type stubborn struct{ release chan struct{} }

func (a stubborn) Run(_ context.Context, _ runner.Request, _ func(runner.Event) error) (runner.Result, error) {
	<-a.release
	return runner.Result{Text: "late"}, nil
}

// stubbornEnv is a service on a real SQLite file whose agent ignores its
// context until the test ends.
func stubbornEnv(t *testing.T, timeout time.Duration) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release); st.Close() })
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, Agent: stubborn{release}, RunTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return &env{svc: svc, store: st, path: path}
}

// owner does what the run's owner does (finish) on its own goroutine.
func owner(h *runner.Handle) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, _, err := finish(h)
		out <- err
	}()
	return out
}

// agentWatch bounds the tests' waits for an owner whose agent never
// returns (until the test ends): what they check is that the owner ends
// at all, so the bound is far above any load's delay and far below the
// wait it guards against, which is forever.
const agentWatch = 30 * time.Second

func waitErr(t *testing.T, ch <-chan error, d time.Duration) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("the run's owner still waits for the agent after %s", d)
		return nil
	}
}

// TestTimeoutRecordsRunWhoseAgentIgnoresContext: run_timeout ends the run
// (failed/timeout, slot freed) although the agent never returns.
func TestTimeoutRecordsRunWhoseAgentIgnoresContext(t *testing.T) {
	for _, stream := range []bool{false, true} {
		e := stubbornEnv(t, 100*time.Millisecond)
		h, err := e.svc.Start(t.Context(), spec("hello", stream))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, waitErr(t, owner(h), agentWatch), runner.ErrTimeout)
		wantState(t, e.get(t, h.Run().ID), runner.StatusFailed, runner.ReasonTimeout)
		if n := e.svc.InFlight(); n != 0 {
			t.Fatalf("InFlight = %d after the timeout", n)
		}
	}
}

// TestNativeCancelOfAgentIgnoringContext: a native cancel returns the
// recorded run and frees the slot without waiting for the agent.
func TestNativeCancelOfAgentIgnoringContext(t *testing.T) {
	e := stubbornEnv(t, 0)
	h, err := e.svc.Start(t.Context(), spec("hello", true))
	if err != nil {
		t.Fatal(err)
	}
	done := owner(h)
	ctx, cancel := context.WithTimeout(t.Context(), agentWatch)
	defer cancel()
	r, err := e.svc.Cancel(ctx, acme, h.Run().ID)
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	wantState(t, r, runner.StatusCancelled, runner.ReasonCancelRequested)
	wantErr(t, waitErr(t, done, agentWatch), runner.ErrCancelled)
	if n := e.svc.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d after the cancel", n)
	}
}

// TestShutdownRecordsRunWhoseAgentIgnoresContext: CancelAll + Wait, as
// shutdown does, records the run cancelled/shutdown.
func TestShutdownRecordsRunWhoseAgentIgnoresContext(t *testing.T) {
	e := stubbornEnv(t, 0)
	h, err := e.svc.Start(t.Context(), spec("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	done := owner(h)
	e.svc.Drain()
	e.svc.CancelAll(runner.ReasonShutdown)
	ctx, cancel := context.WithTimeout(t.Context(), agentWatch)
	defer cancel()
	if err := e.svc.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v (the run is still in flight)", err)
	}
	wantErr(t, waitErr(t, done, agentWatch), runner.ErrCancelled)
	wantState(t, e.get(t, h.Run().ID), runner.StatusCancelled, runner.ReasonShutdown)
}
