package runner_test

import (
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu             sync.Mutex
	started, ended []runner.Run
}

func (o *recorder) RunStarted(r *runner.Run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, *r)
}

func (o *recorder) RunFinished(r *runner.Run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, *r)
}

// A streamed run with a token delay is timed in milliseconds: its duration
// covers the tokens, its time to first token is shorter, both are stored
// and match what the observer was told.
func TestRunTimingsInMilliseconds(t *testing.T) {
	obs := &recorder{}
	e := newEnv(t, withDelay(20*time.Millisecond), withConfig(func(c *runner.ServiceConfig) { c.Observer = obs }))
	h, err := e.svc.Start(t.Context(), spec("one two three four five", true))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	r, err := e.svc.Get(t.Context(), acme, h.Run().ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.DurationMs == nil || r.TimeToFirstTokenMs == nil {
		t.Fatalf("timings not recorded: %v / %v", r.DurationMs, r.TimeToFirstTokenMs)
	}
	// "You said: one two three four five" is 7 words: 6 delays of 20 ms at least.
	if *r.DurationMs < 100 || *r.DurationMs > 5000 {
		t.Fatalf("duration_ms = %d, want ≥ 100 (7 tokens, 20 ms apart)", *r.DurationMs)
	}
	if *r.TimeToFirstTokenMs > *r.DurationMs-80 {
		t.Fatalf("time_to_first_token_ms = %d, not well before the end (%d ms)", *r.TimeToFirstTokenMs, *r.DurationMs)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.started) != 1 || obs.started[0].ID != r.ID || obs.started[0].Status != runner.StatusRunning {
		t.Fatalf("observer saw starts %+v", obs.started)
	}
	if len(obs.ended) != 1 {
		t.Fatalf("observer saw %d ends, want 1", len(obs.ended))
	}
	got := obs.ended[0]
	if got.ID != r.ID || got.Status != runner.StatusCompleted || got.Usage == nil || got.Usage.OutputTokens != r.Usage.OutputTokens ||
		*got.DurationMs != *r.DurationMs || *got.TimeToFirstTokenMs != *r.TimeToFirstTokenMs {
		t.Fatalf("observer saw the end as %+v, store has %+v", got, r)
	}
}

// A run that fails before any text has a duration but no time to first
// token.
func TestFailedRunHasNoTimeToFirstToken(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("/fail", true))
	if err != nil {
		t.Fatal(err)
	}
	finish(h)
	r, err := e.svc.Get(t.Context(), acme, h.Run().ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != runner.StatusFailed || r.DurationMs == nil || r.TimeToFirstTokenMs != nil {
		t.Fatalf("failed run: status %s, duration %v, ttft %v; want failed, set, null", r.Status, r.DurationMs, r.TimeToFirstTokenMs)
	}
}
