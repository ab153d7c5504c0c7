package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

func TestClientDisconnectCancelsTheRun(t *testing.T) {
	e := newEnv(t, withDelay(20*time.Millisecond))
	before := e.goroutineBaseline(t)

	reqCtx, hangUp := context.WithCancel(t.Context())
	h, err := e.svc.Start(reqCtx, spec(longText(200), true))
	if err != nil {
		t.Fatal(err)
	}
	first := <-h.Events()
	if first.Delta != "You" {
		t.Fatalf("first delta %q", first.Delta)
	}
	hangUp() // the client goes away mid-stream
	_, deltas, err := finish(h)
	wantErr(t, err, runner.ErrCancelled)
	// The deltas are the measure of the cut (a run left alone sends its
	// 199 others, 20 ms apart), not the time, which load stretches.
	if len(deltas) > 5 {
		t.Fatalf("%d more deltas after the client left", len(deltas))
	}
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusCancelled, runner.ReasonClientDisconnect)
	if r.EndedAt == nil {
		t.Fatal("cancelled run has no ended_at")
	}
	if r.Attempts != 1 {
		t.Fatalf("attempts %d; Finish waits for the agent, so a cancelled run knows it made 1", r.Attempts)
	}
	waitGoroutines(t, before)
}

func TestNativeCancel(t *testing.T) {
	e := newEnv(t, withDelay(20*time.Millisecond))
	h, err := e.svc.Start(t.Context(), spec(longText(200), true))
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() {
		_, _, err := finish(h)
		finished <- err
	}()
	r, err := e.svc.Cancel(ctxWithTimeout(t), acme, h.Run().ID)
	if err != nil {
		t.Fatal(err)
	}
	// Cancel returns once the outcome is recorded.
	wantState(t, r, runner.StatusCancelled, runner.ReasonCancelRequested)
	wantErr(t, <-finished, runner.ErrCancelled)
	// Cancelling a terminal run changes nothing.
	again, err := e.svc.Cancel(t.Context(), acme, h.Run().ID)
	if err != nil || again.Status != runner.StatusCancelled || *again.EndedAt != *r.EndedAt {
		t.Fatalf("second Cancel = %+v, %v", again, err)
	}
}

func TestCancelIsTenantScoped(t *testing.T) {
	e := newEnv(t, withDelay(5*time.Millisecond))
	h, err := e.svc.Start(t.Context(), spec(longText(20), false))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Cancel(t.Context(), runner.Scope{TenantID: "globex"}, h.Run().ID)
	wantErr(t, err, runner.ErrNotFound)
	if _, _, err := finish(h); err != nil {
		t.Fatalf("run was disturbed by another tenant's cancel: %v", err)
	}
	wantState(t, e.get(t, h.Run().ID), runner.StatusCompleted, "")
}

func TestCancelAllOnShutdown(t *testing.T) {
	e := newEnv(t, withDelay(20*time.Millisecond))
	var hs []*runner.Handle
	for range 3 {
		h, err := e.svc.Start(t.Context(), spec(longText(200), true))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	errs := make(chan error, len(hs))
	for _, h := range hs {
		go func() {
			_, _, err := finish(h)
			errs <- err
		}()
	}
	if n := e.svc.InFlight(); n != 3 {
		t.Fatalf("InFlight = %d, want 3", n)
	}
	e.svc.Drain()
	e.svc.CancelAll(runner.ReasonShutdown)
	if err := e.svc.Wait(ctxWithTimeout(t)); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	for range hs {
		wantErr(t, <-errs, runner.ErrCancelled)
	}
	for _, h := range hs {
		wantState(t, e.get(t, h.Run().ID), runner.StatusCancelled, runner.ReasonShutdown)
	}
	if n := e.svc.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d after Wait", n)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	e := newEnv(t, withDelay(50*time.Millisecond))
	h, err := e.svc.Start(t.Context(), spec(longText(100), false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	wantErr(t, e.svc.Wait(ctx), context.DeadlineExceeded)
	e.svc.CancelAll("")
	finish(h)
	if err := e.svc.Wait(ctxWithTimeout(t)); err != nil {
		t.Fatal(err)
	}
	wantState(t, e.get(t, h.Run().ID), runner.StatusCancelled, runner.ReasonShutdown)
}

func TestRunTimeout(t *testing.T) {
	e := newEnv(t, withDelay(30*time.Millisecond), withConfig(func(c *runner.ServiceConfig) {
		c.RunTimeout = 60 * time.Millisecond
	}))
	h, err := e.svc.Start(t.Context(), spec(longText(100), true))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = finish(h)
	wantErr(t, err, runner.ErrTimeout)
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusFailed, runner.ReasonTimeout)
	if r.Error == nil || r.Error.Code != runner.ReasonTimeout {
		t.Fatalf("error %+v", r.Error)
	}
}

func TestWaitingThenCancel(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("/wait for approval", false))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = finish(h)
	wantErr(t, err, runner.ErrWaiting)
	id := h.Run().ID
	r := e.get(t, id)
	wantState(t, r, runner.StatusWaiting, runner.ReasonApproval)
	if r.EndedAt != nil || r.Error != nil {
		t.Fatalf("waiting run = %+v; it has not ended", r)
	}
	if e.svc.InFlight() != 0 {
		t.Fatal("a waiting run holds an in-flight slot")
	}
	r, err = e.svc.Cancel(t.Context(), acme, id)
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, r, runner.StatusCancelled, runner.ReasonCancelRequested)
	if r.EndedAt == nil {
		t.Fatal("cancelled run has no ended_at")
	}
}

func TestFinishIsIdempotent(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := h.Wait()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			var err error
			if i%2 == 1 {
				err = errors.New("late failure")
			}
			errs[i] = h.Finish(&res, err)
		})
	}
	wg.Wait()
	for _, err := range errs[1:] {
		if err != errs[0] {
			t.Fatalf("Finish returned different outcomes: %v", errs)
		}
	}
	r := e.get(t, h.Run().ID)
	if errs[0] == nil {
		wantState(t, r, runner.StatusCompleted, "")
	} else {
		wantState(t, r, runner.StatusFailed, runner.ReasonFailed)
	}
	// A later call still returns the first outcome and writes nothing.
	if err := h.Finish(nil, runner.ErrProvider); err != errs[0] {
		t.Fatalf("late Finish = %v, want %v", err, errs[0])
	}
	if again := e.get(t, h.Run().ID); again.Status != r.Status || again.StatusReason != r.StatusReason {
		t.Fatalf("late Finish changed the run to %s/%s", again.Status, again.StatusReason)
	}
}

func TestFinishBeforeAgentReturnsStopsIt(t *testing.T) {
	// An hour between tokens: a Finish that waited out the agent would
	// take it, so a bound of a minute is met at once or never, whatever
	// the machine's load.
	e := newEnv(t, withDelay(time.Hour))
	before := e.goroutineBaseline(t)
	h, err := e.svc.Start(t.Context(), spec(longText(50), true))
	if err != nil {
		t.Fatal(err)
	}
	<-h.Events()
	// The owner gives up (e.g. a later stage failed) without reading on.
	start := time.Now()
	err = h.Finish(nil, codedErr{})
	if _, ok := err.(codedErr); !ok {
		t.Fatalf("Finish = %v", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("Finish took %v; it must stop the agent, not wait out its delay", d)
	}
	wantState(t, e.get(t, h.Run().ID), runner.StatusFailed, runner.ReasonPluginError)
	waitGoroutines(t, before)
}

func TestMaxInFlight(t *testing.T) {
	e := newEnv(t, withDelay(5*time.Millisecond), withConfig(func(c *runner.ServiceConfig) { c.MaxInFlight = 1 }))
	h, err := e.svc.Start(t.Context(), spec(longText(20), false))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Start(t.Context(), spec("second", false))
	wantErr(t, err, runner.ErrUnavailable)
	if n := e.countRuns(t); n != 1 {
		t.Fatalf("%d runs recorded, want only the admitted one", n)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	h2, err := e.svc.Start(t.Context(), spec("third", false))
	if err != nil {
		t.Fatalf("slot not released after Finish: %v", err)
	}
	finish(h2)
}

func TestDrainRefusesNewRuns(t *testing.T) {
	e := newEnv(t)
	e.svc.Drain()
	_, err := e.svc.Start(t.Context(), spec("hi", false))
	wantErr(t, err, runner.ErrUnavailable)
	if n := e.countRuns(t); n != 0 {
		t.Fatalf("%d runs recorded while draining", n)
	}
}
