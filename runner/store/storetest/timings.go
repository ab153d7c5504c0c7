package storetest

import (
	"testing"

	"github.com/runedge/runedge/runner"
)

// testTransitionRecordsTimings: the terminal write records the run's
// duration and time to first token in milliseconds; a run not yet ended,
// or ended without timings, reads null; listing reads them too.
func testTransitionRecordsTimings(t *testing.T, s runner.Store) {
	ids := mustCreate(t, s, "acme", runner.StatusRunning, 2, nil)
	timed, untimed := ids[0], ids[1]
	if r := mustGet(t, s, timed); r.DurationMs != nil || r.TimeToFirstTokenMs != nil {
		t.Fatalf("running run has timings %v/%v, want null", r.DurationMs, r.TimeToFirstTokenMs)
	}
	if err := s.Transition(ctx(t), timed, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(9),
		DurationMs: ptr(1234), TimeToFirstTokenMs: ptr(56)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Transition(ctx(t), untimed, runner.Transition{Status: runner.StatusFailed, EndedAt: ptr(9)}); err != nil {
		t.Fatal(err)
	}
	check := func(how string, r runner.Run) {
		t.Helper()
		switch r.ID {
		case timed:
			if r.DurationMs == nil || *r.DurationMs != 1234 || r.TimeToFirstTokenMs == nil || *r.TimeToFirstTokenMs != 56 {
				t.Fatalf("%s: timings %v/%v, want 1234/56", how, r.DurationMs, r.TimeToFirstTokenMs)
			}
		case untimed:
			if r.DurationMs != nil || r.TimeToFirstTokenMs != nil {
				t.Fatalf("%s: untimed run reads %v/%v, want null", how, r.DurationMs, r.TimeToFirstTokenMs)
			}
		}
	}
	check("GetRun", mustGet(t, s, timed))
	check("GetRun", mustGet(t, s, untimed))
	runs, _, err := s.ListRuns(ctx(t), runner.ListQuery{TenantID: "acme", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("ListRuns returned %d runs, want 2", len(runs))
	}
	for _, r := range runs {
		check("ListRuns", r)
	}
}
