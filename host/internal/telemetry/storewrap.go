package telemetry

import "github.com/runedge/runedge/runner"

// The metrics and tracing wrappers of the run store and the response
// history embed the interface they wrap, which hides every optional
// interface of what is beneath. The runner looks for two of them, and
// behaves differently without them: keepRelay and keepJoiner put them back
// on a wrapper when the wrapped value has them (and only then: a wrapper
// that always had the methods would promise what the store cannot do).

// keepRelay returns w with inner's runner.CancelRelay, if inner has one:
// without it a cancel of another host's run could not be relayed.
func keepRelay(w, inner runner.Store) runner.Store {
	relay, ok := inner.(runner.CancelRelay)
	if !ok {
		return w
	}
	return struct {
		runner.Store
		runner.CancelRelay
	}{w, relay}
}

// keepJoiner returns w with inner's runner.HistoryJoiner, if inner has one:
// without it a stored response's first and last history writes would each
// take a commit of their own instead of riding on the run's.
func keepJoiner(w, inner runner.HistoryStore) runner.HistoryStore {
	j, ok := inner.(runner.HistoryJoiner)
	if !ok {
		return w
	}
	return struct {
		runner.HistoryStore
		runner.HistoryJoiner
	}{w, j}
}
