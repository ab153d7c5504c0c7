package runner

import "errors"

// ErrInvalidTransition: a state change the lifecycle does not allow from the
// run's current, non-terminal state (e.g. running → queued). A change away
// from a terminal state is reported as ErrNotFound instead (see
// Store.Transition), so "first terminal write wins" reads the same in every
// store.
var ErrInvalidTransition = errors.New("run transition not allowed")

// lifecycle lists, per state, the states a run may move to. It is the one place
// the lifecycle of runner/README.md "States" is written down; stores and the service
// consult it rather than repeating it.
var lifecycle = map[Status][]Status{
	StatusQueued:  {StatusRunning, StatusFailed, StatusCancelled},
	StatusRunning: {StatusCompleted, StatusFailed, StatusCancelled, StatusWaiting},
	StatusWaiting: {StatusRunning, StatusCancelled, StatusFailed},
}

// CanTransition reports whether a run in state from may move to state to.
func CanTransition(from, to Status) bool {
	for _, s := range lifecycle[from] {
		if s == to {
			return true
		}
	}
	return false
}

// TransitionSources returns the states from which a run may move to to, in
// a fixed order. Stores use it to make the check and the update one
// statement ("... WHERE status IN (...)"), so no other writer can slip in
// between them.
func TransitionSources(to Status) []Status {
	var from []Status
	for _, s := range []Status{StatusQueued, StatusRunning, StatusWaiting} {
		if CanTransition(s, to) {
			from = append(from, s)
		}
	}
	return from
}
