package filtertest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// Runs is a run service for a stage's tests: the real runner.Service on a
// real SQLite file in the test's temporary directory, with a scripted
// agent. Ended receives each run as its outcome is recorded.
//
// Opening the store is most of a small test's time (about 25 ms, ten
// times that under the race detector), so a test of several cases may
// keep one Runs and give each case its agent (SetAgent).
type Runs struct {
	Service *runner.Service
	Ended   chan runner.Run
	agent   *switchAgent
}

// NewRuns starts a run service with agent; it closes when the test ends.
func NewRuns(tb testing.TB, agent runner.Agent) *Runs {
	tb.Helper()
	st, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "runs.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	r := &Runs{Ended: make(chan runner.Run, 64), agent: &switchAgent{a: agent}}
	r.Service, err = runner.NewService(tb.Context(), runner.ServiceConfig{Store: st, Agent: r.agent, Observer: observer{r}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.Service.Close)
	return r
}

// observer passes ended runs on to Runs.Ended.
type observer struct{ r *Runs }

func (observer) RunStarted(*runner.Run) {}

func (o observer) RunFinished(r *runner.Run) {
	select {
	case o.r.Ended <- *r:
	default: // a test that does not read Ended must not block the runner
	}
}

// WaitEnded waits (at most d) for the next run to end and returns it.
func (r *Runs) WaitEnded(tb testing.TB, d time.Duration) runner.Run {
	tb.Helper()
	select {
	case run := <-r.Ended:
		return run
	case <-time.After(d):
		tb.Fatalf("no run ended within %s", d)
		return runner.Run{}
	}
}

// Get reads a run from the store, across tenants.
func (r *Runs) Get(tb testing.TB, id string) runner.Run {
	tb.Helper()
	run, err := r.Service.Get(tb.Context(), runner.Scope{Admin: true}, id)
	if err != nil {
		tb.Fatalf("get %s: %v", id, err)
	}
	return run
}

// SetAgent makes agent run the runs started from now on.
func (r *Runs) SetAgent(agent runner.Agent) {
	r.agent.mu.Lock()
	defer r.agent.mu.Unlock()
	r.agent.a = agent
}

// switchAgent runs each run with the agent set when it starts.
type switchAgent struct {
	mu sync.Mutex
	a  runner.Agent
}

func (s *switchAgent) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	s.mu.Lock()
	a := s.a
	s.mu.Unlock()
	return a.Run(ctx, req, emit)
}
