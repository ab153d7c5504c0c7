package filtertest

import (
	"context"
	"time"

	"github.com/runedge/runedge/runner"
)

// Agent is a scripted agent, the native event source of a stage's tests:
// it waits for Gate (when set), then emits Events in order, each after Gap
// and Wait(i) (when set: a test paces the events on what it observes), and
// returns Result and Err. A run's end (cancel, timeout, its owner
// finishing it) ends the wait with the run's cause, as a real agent's
// provider call would.
type Agent struct {
	Gate   <-chan struct{}
	Gap    time.Duration
	Wait   func(i int)
	Events []runner.Event
	Result runner.Result
	Err    error

	// Started, when set, receives the request of each run as it starts.
	Started chan<- runner.Request
}

var _ runner.Agent = (*Agent)(nil)

// Run implements runner.Agent.
func (a *Agent) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	if a.Started != nil {
		a.Started <- req
	}
	if a.Gate != nil {
		select {
		case <-a.Gate:
		case <-ctx.Done():
			return runner.Result{}, context.Cause(ctx)
		}
	}
	for i, ev := range a.Events {
		if a.Gap > 0 {
			t := time.NewTimer(a.Gap)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return runner.Result{}, context.Cause(ctx)
			}
		}
		if a.Wait != nil {
			a.Wait(i)
		}
		if err := emit(ev); err != nil {
			return runner.Result{}, err
		}
	}
	return a.Result, a.Err
}

// Deltas are text events, one per string.
func Deltas(texts ...string) []runner.Event {
	evs := make([]runner.Event, len(texts))
	for i, s := range texts {
		evs[i] = runner.Event{Delta: s}
	}
	return evs
}
