package storetest

import (
	"testing"

	"github.com/runedge/runedge/runner"
)

// testTransitionRecordsAttempts: the agent's count of provider calls is
// written with the outcome; a transition that does not know it (0) keeps
// the stored count, and a refused terminal write changes nothing.
func testTransitionRecordsAttempts(t *testing.T, s runner.Store) {
	id := mustCreate(t, s, "acme", runner.StatusRunning, 1, func(r *runner.Run) { r.Attempts = 0 })[0]
	if r := mustGet(t, s, id); r.Attempts != 0 {
		t.Fatalf("new run has attempts %d, want 0", r.Attempts)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusWaiting, Reason: runner.ReasonApproval, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if r := mustGet(t, s, id); r.Attempts != 1 {
		t.Fatalf("attempts %d after a transition without a count, want the stored 1", r.Attempts)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusFailed, Reason: runner.ReasonOutputInvalid,
		EndedAt: ptr(7), Error: &runner.ErrorInfo{Code: runner.ReasonOutputInvalid, Message: "x"}, Attempts: 2}); err != nil {
		t.Fatal(err)
	}
	if r := mustGet(t, s, id); r.Attempts != 2 {
		t.Fatalf("failed run has attempts %d, want 2", r.Attempts)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(8), Attempts: 5}); err == nil {
		t.Fatal("a second terminal write succeeded")
	}
	if r := mustGet(t, s, id); r.Attempts != 2 {
		t.Fatalf("a refused terminal write changed attempts to %d", r.Attempts)
	}
	// Listing reads the column too.
	runs, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: "acme", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			if r.Attempts != 2 {
				t.Fatalf("ListRuns reads attempts %d, want 2", r.Attempts)
			}
			return
		}
	}
	t.Fatalf("ListRuns did not return run %s", id)
}
