package runner

import "time"

// Observer watches runs go by: metrics, traces, the operator page. Its
// methods are called synchronously on the run's path (RunStarted once the
// run is recorded, before the agent starts; RunFinished once the outcome is
// recorded), so they must be quick and must not block. The *Run is the
// observer's to read during the call only: it must not modify it, and one
// that keeps it keeps a copy (the runner hands over its own record, not a
// copy per observer call). RunFinished's carries Elapsed and FirstToken.
type Observer interface {
	RunStarted(r *Run)
	RunFinished(r *Run)
}

// nopObserver is the Observer of a service configured without one.
type nopObserver struct{}

func (nopObserver) RunStarted(*Run)  {}
func (nopObserver) RunFinished(*Run) {}

// CommitObserver is told about each commit a Store makes for runs: how long
// it took and how many run writes it carried (1 without group commit). The
// host's metrics implement it.
type CommitObserver interface {
	ObserveCommit(d time.Duration, writes int)
}

// CommitObservable is implemented by a Store that reports its own commits:
// a group-committing store, whose batches a caller cannot see. The host
// calls SetCommitObserver once, before the store is used; a store without
// it is timed from outside, one commit per StartRun or terminal Transition.
type CommitObservable interface {
	SetCommitObserver(CommitObserver)
}
