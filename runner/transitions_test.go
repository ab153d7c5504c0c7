package runner_test

import (
	"slices"
	"testing"

	"github.com/runedge/runedge/runner"
)

func TestCanTransitionFollowsTheDesign(t *testing.T) {
	all := []runner.Status{runner.StatusQueued, runner.StatusRunning, runner.StatusCompleted,
		runner.StatusFailed, runner.StatusCancelled, runner.StatusWaiting}
	allowed := map[[2]runner.Status]bool{
		{runner.StatusQueued, runner.StatusRunning}:    true,
		{runner.StatusQueued, runner.StatusFailed}:     true,
		{runner.StatusQueued, runner.StatusCancelled}:  true,
		{runner.StatusRunning, runner.StatusCompleted}: true,
		{runner.StatusRunning, runner.StatusFailed}:    true,
		{runner.StatusRunning, runner.StatusCancelled}: true,
		{runner.StatusRunning, runner.StatusWaiting}:   true,
		{runner.StatusWaiting, runner.StatusRunning}:   true,
		{runner.StatusWaiting, runner.StatusCancelled}: true,
		{runner.StatusWaiting, runner.StatusFailed}:    true,
	}
	for _, from := range all {
		for _, to := range all {
			if got, want := runner.CanTransition(from, to), allowed[[2]runner.Status{from, to}]; got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if got, want := runner.TransitionSources(runner.StatusCancelled),
		[]runner.Status{runner.StatusQueued, runner.StatusRunning, runner.StatusWaiting}; !slices.Equal(got, want) {
		t.Errorf("TransitionSources(cancelled) = %v, want %v", got, want)
	}
	if got := runner.TransitionSources(runner.StatusQueued); len(got) != 0 {
		t.Errorf("TransitionSources(queued) = %v, want none", got)
	}
}
