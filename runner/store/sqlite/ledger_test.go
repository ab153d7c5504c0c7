package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// The usage ledger's lines of run ends that share a commit of the group
// commit: each run's end writes its line once, with its own values, and
// a line that cannot be written (its key taken) fails its own run's end
// and no other (the batch runs again, each write alone). This holds for
// any way of writing a batch's lines (RATIONALE.md "A batch's ledger
// lines in one statement", tried and not kept).
func TestLedgerLinesOfOneBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(t.Context(), path, Options{CommitWindow: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const at = int64(1_700_200_000)
	start := func(n int) []*runner.Run {
		runs := make([]*runner.Run, n)
		var wg sync.WaitGroup
		for i := range runs {
			r := &runner.Run{ID: runner.NewID(contract.RunPrefix), Status: runner.StatusRunning, Actor: runner.Actor{ID: "u", Type: "user"},
				TenantID: "acme", Endpoint: "/v1/responses", Model: "m", CreatedAt: at, Request: []byte(`{}`)}
			r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
			runs[i] = r
			wg.Go(func() {
				if err := s.StartRun(t.Context(), r, false, false); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		return runs
	}
	entry := func(r *runner.Run, i int) *runner.UsageEntry {
		return &runner.UsageEntry{RunID: r.ID, TenantID: r.TenantID, ActorID: fmt.Sprintf("actor-%d", i), Token: fmt.Sprintf("tok-%d", i),
			Model: fmt.Sprintf("p/model-%d", i), At: at + int64(i), InputTokens: int64(10 + i), CachedTokens: int64(i),
			OutputTokens: int64(20 + i), ReasoningTokens: int64(2 * i), CostNanos: int64(1000 + i)}
	}
	// end ends runs at once, each with its line; it returns each end's error.
	end := func(runs []*runner.Run, lines []*runner.UsageEntry) []error {
		errs := make([]error, len(runs))
		var wg sync.WaitGroup
		for i, r := range runs {
			wg.Go(func() {
				u := &runner.Usage{InputTokens: int(lines[i].InputTokens), OutputTokens: int(lines[i].OutputTokens)}
				errs[i] = s.Transition(t.Context(), r.ID, runner.Transition{Status: runner.StatusCompleted,
					EndedAt: &lines[i].At, Usage: u, Ledger: lines[i]})
			})
		}
		wg.Wait()
		return errs
	}
	// check holds the ledger to want: one line per run, its values.
	check := func(want map[string]*runner.UsageEntry) {
		t.Helper()
		rows, err := s.r.Query(`SELECT at, run_id, tenant_id, actor_id, token, model, input_tokens, cached_tokens,
			output_tokens, reasoning_tokens, cost_nanos FROM usage_ledger`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int{}
		for rows.Next() {
			var e runner.UsageEntry
			if err := rows.Scan(&e.At, &e.RunID, &e.TenantID, &e.ActorID, &e.Token, &e.Model, &e.InputTokens,
				&e.CachedTokens, &e.OutputTokens, &e.ReasoningTokens, &e.CostNanos); err != nil {
				t.Fatal(err)
			}
			got[e.RunID]++
			if w := want[e.RunID]; w == nil || *w != e {
				t.Errorf("line %+v, want %+v", e, w)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for id := range want {
			if got[id] != 1 {
				t.Errorf("run %s has %d lines, want 1", id, got[id])
			}
		}
	}

	want := map[string]*runner.UsageEntry{}
	runs := start(37)
	var lines []*runner.UsageEntry
	for i, r := range runs {
		lines = append(lines, entry(r, i))
		want[r.ID] = lines[i]
	}
	b0, _ := s.CommitStats()
	for i, err := range end(runs, lines) {
		if err != nil {
			t.Fatalf("end %d: %v", i, err)
		}
	}
	if b, _ := s.CommitStats(); b-b0 > 2 {
		t.Fatalf("%d ends in %d commits: the test needs them to share commits", len(runs), b-b0)
	}
	check(want)

	// A line whose key (its time and run) another process took: its end
	// fails, alone.
	runs = start(19)
	lines = lines[:0]
	for i, r := range runs {
		lines = append(lines, entry(r, 100+i))
	}
	taken := 5
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO usage_ledger (at, run_id, tenant_id) VALUES (?, ?, 'other')`, lines[taken].At, runs[taken].ID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i, err := range end(runs, lines) {
		switch {
		case i == taken && err == nil:
			t.Errorf("the end whose line's key was taken succeeded")
		case i == taken && errors.Is(err, runner.ErrUnavailable):
			t.Errorf("the refused line is an outage: %v", err)
		case i != taken && err != nil:
			t.Errorf("end %d failed beside the refused line: %v", i, err)
		case i != taken:
			want[runs[i].ID] = lines[i]
		}
	}
	if r, err := s.GetRun(t.Context(), "", runs[taken].ID); err != nil || r.Status != runner.StatusRunning {
		t.Errorf("the run whose line was refused is %s, %v; want still running (its end not kept)", r.Status, err)
	}
	want[runs[taken].ID] = &runner.UsageEntry{At: lines[taken].At, RunID: runs[taken].ID, TenantID: "other"}
	check(want)
}
