package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

// reach creates a run and walks it to status through allowed transitions.
func reach(t *testing.T, s runner.Store, status runner.Status) string {
	t.Helper()
	start := runner.StatusRunning
	if status == runner.StatusQueued {
		start = runner.StatusQueued
	}
	id := mustCreate(t, s, "acme", start, 1, nil)[0]
	switch status {
	case runner.StatusQueued, runner.StatusRunning:
		return id
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: status, EndedAt: ptr(5)}); err != nil {
		t.Fatalf("running → %s: %v", status, err)
	}
	return id
}

func testTransitionRules(t *testing.T, s runner.Store) {
	all := []runner.Status{runner.StatusQueued, runner.StatusRunning, runner.StatusCompleted,
		runner.StatusFailed, runner.StatusCancelled, runner.StatusWaiting}
	for _, from := range all {
		for _, to := range all {
			t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
				id := reach(t, s, from)
				err := s.Transition(ctx(t), id, runner.Transition{Status: to, Reason: "r"})
				got := mustGet(t, s, id)
				switch {
				case runner.CanTransition(from, to):
					if err != nil {
						t.Fatalf("allowed transition refused: %v", err)
					}
					if got.Status != to || got.StatusReason != "r" {
						t.Fatalf("after transition: %s/%s, want %s/r", got.Status, got.StatusReason, to)
					}
				case from.Terminal():
					if !errors.Is(err, runner.ErrNotFound) {
						t.Fatalf("transition away from terminal %s: err = %v, want ErrNotFound", from, err)
					}
				default:
					if !errors.Is(err, runner.ErrInvalidTransition) {
						t.Fatalf("disallowed transition: err = %v, want ErrInvalidTransition", err)
					}
				}
				if err != nil && got.Status != from {
					t.Fatalf("refused transition changed the status to %s", got.Status)
				}
			})
		}
	}
	if err := s.Transition(ctx(t), "run_unknown", runner.Transition{Status: runner.StatusFailed}); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("transition of an unknown run: err = %v, want ErrNotFound", err)
	}
	id := reach(t, s, runner.StatusRunning)
	if err := s.Transition(ctx(t), id, runner.Transition{Status: "bogus"}); err == nil {
		t.Fatal("transition to an unknown status succeeded")
	}
}

func testTransitionRecordsFields(t *testing.T, s runner.Store) {
	id := reach(t, s, runner.StatusRunning)
	before := mustGet(t, s, id)
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusWaiting, Reason: runner.ReasonApproval}); err != nil {
		t.Fatal(err)
	}
	w := mustGet(t, s, id)
	if w.EndedAt != nil || w.Usage != nil || w.Error != nil || !reflect.DeepEqual(w.StartedAt, before.StartedAt) {
		t.Fatalf("waiting run gained fields it was not given: %+v", w)
	}
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusRunning, StartedAt: ptr(1_700_000_050)}); err != nil {
		t.Fatal(err)
	}
	if r := mustGet(t, s, id); r.StartedAt == nil || *r.StartedAt != 1_700_000_050 || r.StatusReason != "" {
		t.Fatalf("resumed run: started_at %v reason %q", r.StartedAt, r.StatusReason)
	}
	usage := &runner.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}
	if err := s.Transition(ctx(t), id, runner.Transition{
		Status: runner.StatusCompleted, EndedAt: ptr(1_700_000_060), Usage: usage, Output: "You said: hi",
	}); err != nil {
		t.Fatal(err)
	}
	r := mustGet(t, s, id)
	if r.Status != runner.StatusCompleted || r.EndedAt == nil || *r.EndedAt != 1_700_000_060 ||
		!reflect.DeepEqual(r.Usage, usage) || r.Output != "You said: hi" || r.Error != nil {
		t.Fatalf("completed run = %+v", r)
	}

	f := reach(t, s, runner.StatusRunning)
	info := &runner.ErrorInfo{Code: runner.ReasonProviderError, Message: "upstream said no"}
	if err := s.Transition(ctx(t), f, runner.Transition{
		Status: runner.StatusFailed, Reason: runner.ReasonProviderError, EndedAt: ptr(9), Error: info,
	}); err != nil {
		t.Fatal(err)
	}
	if r := mustGet(t, s, f); !reflect.DeepEqual(r.Error, info) || r.StatusReason != runner.ReasonProviderError || r.Usage != nil {
		t.Fatalf("failed run = %+v", r)
	}
}

func testFirstTerminalWins(t *testing.T, s runner.Store) {
	id := reach(t, s, runner.StatusRunning)
	if err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCancelled, Reason: runner.ReasonClientDisconnect, EndedAt: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	err := s.Transition(ctx(t), id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(11), Output: "late", Usage: &runner.Usage{TotalTokens: 1}})
	if !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("second terminal write: err = %v, want ErrNotFound", err)
	}
	r := mustGet(t, s, id)
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect || *r.EndedAt != 10 || r.Output != "" || r.Usage != nil {
		t.Fatalf("second terminal write changed the run: %+v", r)
	}
}

func testMarkInterrupted(t *testing.T, s runner.Store) {
	queued := reach(t, s, runner.StatusQueued)
	running := reach(t, s, runner.StatusRunning)
	waiting := reach(t, s, runner.StatusWaiting)
	done := reach(t, s, runner.StatusCompleted)
	n, err := s.MarkInterrupted(ctx(t), "host-a", 1_700_000_999)
	if err != nil || n != 2 {
		t.Fatalf("MarkInterrupted = %d, %v; want 2", n, err)
	}
	for _, id := range []string{queued, running} {
		r := mustGet(t, s, id)
		if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted ||
			r.EndedAt == nil || *r.EndedAt != 1_700_000_999 || r.Error == nil || r.Error.Code != runner.ReasonInterrupted {
			t.Fatalf("interrupted run = %+v", r)
		}
	}
	if r := mustGet(t, s, waiting); r.Status != runner.StatusWaiting {
		t.Fatalf("waiting run became %s; waiting runs survive a restart", r.Status)
	}
	if r := mustGet(t, s, done); r.Status != runner.StatusCompleted {
		t.Fatalf("completed run became %s", r.Status)
	}
	if n, err := s.MarkInterrupted(ctx(t), "host-a", 1_700_001_000); err != nil || n != 0 {
		t.Fatalf("second MarkInterrupted = %d, %v; want 0", n, err)
	}
}
