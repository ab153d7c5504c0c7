package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runedge/runedge/runner"
)

// timedStore times the run store's writes on the request path: StartRun
// (the write before the agent starts) and Transition (the outcome, before
// the reply's last byte), as runedge_store_write_duration_seconds. A store
// that reports its own commits (runner.CommitObservable: a group-committing
// store) feeds the commit metrics itself; for any other store each of these
// writes is one commit of one run.
type timedStore struct {
	runner.Store
	m          *Metrics
	selfReport bool
}

func InstrumentStore(st runner.Store, m *Metrics) runner.Store {
	ts := &timedStore{Store: st, m: m}
	if co, ok := st.(runner.CommitObservable); ok {
		co.SetCommitObserver(m)
		ts.selfReport = true
	}
	return keepRelay(ts, st)
}

func (t *timedStore) observe(op prometheus.Observer, start time.Time) {
	d := time.Since(start)
	op.Observe(d.Seconds())
	if !t.selfReport {
		t.m.ObserveCommit(d, 1)
	}
}

func (t *timedStore) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	if t.m.off.Load() {
		return t.Store.StartRun(ctx, r, newSession, newThread)
	}
	start := time.Now()
	err := t.Store.StartRun(ctx, r, newSession, newThread)
	t.observe(t.m.storeStart, start)
	return err
}

func (t *timedStore) Transition(ctx context.Context, id string, tr runner.Transition) error {
	if t.m.off.Load() {
		return t.Store.Transition(ctx, id, tr)
	}
	start := time.Now()
	err := t.Store.Transition(ctx, id, tr)
	t.observe(t.m.storeFinish, start)
	return err
}
