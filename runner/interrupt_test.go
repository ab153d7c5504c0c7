package runner_test

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"
)

// goroutinesCreated is the process's count of goroutines ever created.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A run that ends by its owner's Finish starts no goroutine for its
// OnInterrupt watch: context.AfterFunc calls its function on a goroutine
// of its own, and Finish ended the run's context with the watch still
// set, one goroutine per request only to find the run finished.
func TestFinishStartsNoGoroutine(t *testing.T) {
	e := newEnv(t)
	called := 0
	run := func() {
		h, err := e.svc.Start(t.Context(), spec("hello", false))
		if err != nil {
			t.Fatal(err)
		}
		stop := h.OnInterrupt(func() { called++ })
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
		stop()
	}
	for range 20 { // warm: the agent's worker goroutines exist
		run()
	}
	const n = 100
	before := goroutinesCreated()
	for range n {
		run()
	}
	// The agent runs on an idle worker; nothing else of a run needs a
	// goroutine. Allow a few for the runtime and the store's timers.
	if created := goroutinesCreated() - before; created > n/4 {
		t.Fatalf("%d goroutines created over %d runs", created, n)
	}
	if called != 0 {
		t.Fatalf("OnInterrupt called %d times for runs that finished", called)
	}
}

// OnInterrupt still calls its function when the run is interrupted
// before Finish: here the client's context ends.
func TestOnInterruptCalledWhenInterrupted(t *testing.T) {
	e := newEnv(t, withDelay(20*time.Millisecond))
	reqCtx, hangUp := context.WithCancel(t.Context())
	h, err := e.svc.Start(reqCtx, spec(longText(50), true))
	if err != nil {
		t.Fatal(err)
	}
	interrupted := make(chan struct{})
	defer h.OnInterrupt(func() { close(interrupted) })()
	<-h.Events()
	hangUp()
	select {
	case <-interrupted:
	case <-time.After(10 * time.Second):
		t.Fatal("OnInterrupt not called after the client went away")
	}
	finish(h)
}

// OnInterrupt still calls its function when the run is interrupted after
// its agent returned and before Finish (a reply being written): the run's
// one watch of its context serves the calls and the abandon watch, and
// the agent's return must not stop it.
func TestOnInterruptAfterAgentReturned(t *testing.T) {
	e := newEnv(t)
	reqCtx, hangUp := context.WithCancel(t.Context())
	h, err := e.svc.Start(reqCtx, spec("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	interrupted := make(chan struct{})
	defer h.OnInterrupt(func() { close(interrupted) })()
	if _, err := h.Wait(); err != nil {
		t.Fatal(err)
	}
	hangUp()
	select {
	case <-interrupted:
	case <-time.After(10 * time.Second):
		t.Fatal("OnInterrupt not called after the client went away")
	}
	finish(h)
}
