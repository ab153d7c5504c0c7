// Package storetest is the conformance suite every runner.Store passes. The
// service relies on these behaviours (tenant isolation, newest-first paging,
// first terminal write wins, crash recovery) rather than on any one
// database, so a new store (PostgreSQL) proves itself by running the same
// suite:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) runner.Store { return openEmpty(t) })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Run runs the suite. open must return a new, empty store for each call and
// arrange (with t.Cleanup) for it to be closed.
func Run(t *testing.T, open func(t *testing.T) runner.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s runner.Store)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"CreateRefusesTerminalStatus", testCreateRefusesTerminalStatus},
		{"DuplicateRunID", testDuplicateRunID},
		{"SessionsAndThreads", testSessionsAndThreads},
		{"StartRunPlaces", testStartRunPlaces},
		{"StartRunIsAtomic", testStartRunIsAtomic},
		{"StartRunIsTenantScoped", testStartRunTenantScoped},
		{"OwnSessionAndThreadIDs", testOwnIDs},
		{"TenantIsolation", testTenantIsolation},
		{"ListNewestFirstAndPaging", testListPaging},
		{"ListFilters", testListFilters},
		{"ListLimits", testListLimits},
		{"ListCursorIsTenantScoped", testListCursorTenantScoped},
		{"TransitionRules", testTransitionRules},
		{"TransitionRecordsFields", testTransitionRecordsFields},
		{"TransitionRecordsAttempts", testTransitionRecordsAttempts},
		{"TransitionRecordsTimings", testTransitionRecordsTimings},
		{"FirstTerminalWriteWins", testFirstTerminalWins},
		{"MarkInterrupted", testMarkInterrupted},
		{"MarkInterruptedIsPerHost", testMarkInterruptedPerHost},
		{"PurgeBefore", testPurgeBefore},
		{"PurgeReachesRunsThatEndLater", testPurgeLater},
		{"ConcurrentStartsAndFinishes", testConcurrentStartsAndFinishes},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentTerminalWrites", testConcurrentTerminalWrites},
		{"UsageLedger", testUsageLedger},
		{"UsageLedgerLines", testLedgerLines},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// newRun returns a run of tenant in status, with every field set so that a
// store dropping one fails CreateAndGet.
// created is when the suite's runs were created (newRun). A run ends
// after it was created: the retention tests' end times and cutoffs are
// after(n), n seconds past it (a store may stop its purge at the first
// run created after the cutoff).
const created = int64(1_700_000_000)

// after is n seconds after the runs' creation.
func after(n int64) int64 { return created + n }

func newRun(tenant string, status runner.Status) *runner.Run {
	started := int64(1_700_000_001)
	req, _ := json.Marshal(runner.Request{Input: []runner.Message{{Role: "user", Content: "hi"}}, Stream: true})
	return &runner.Run{
		ID:            runner.NewID(contract.RunPrefix),
		Object:        "run",
		Status:        status,
		SessionID:     contract.SessionPrefix + tenant,
		ThreadID:      contract.ThreadPrefix + tenant,
		Actor:         runner.Actor{ID: "u1", Type: "user", Name: "Ada"},
		TenantID:      tenant,
		Endpoint:      "/v1/chat/completions",
		Model:         "service",
		RequestID:     "req-1",
		CorrelationID: "corr-1",
		HostID:        "host-a",
		TraceID:       "4bf92f3577b34da6a3ce929d0e0e4736",
		CreatedAt:     created,
		StartedAt:     &started,
		Request:       req,
		Attempts:      1,
	}
}

// mustCreate inserts n runs of tenant in status and returns their ids in
// insertion order.
func mustCreate(t *testing.T, s runner.Store, tenant string, status runner.Status, n int, edit func(*runner.Run)) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		r := newRun(tenant, status)
		if edit != nil {
			edit(r)
		}
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatalf("StartRun: %v", err)
		}
		ids[i] = r.ID
	}
	return ids
}

func mustGet(t *testing.T, s runner.Store, id string) runner.Run {
	t.Helper()
	r, err := s.GetRun(t.Context(), "", id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return r
}

func ptr(n int64) *int64 { return &n }

// ctx is a short name for the test's context in the many store calls.
func ctx(t *testing.T) context.Context { return t.Context() }
