package storetest

import (
	"fmt"
	"testing"

	"github.com/runedge/runedge/runner"
)

// The usage ledger (runner/usage.go): a store that keeps it sums it by
// tenant, actor, token and time, equal to the runs' own recorded usage.

const day = 86400

// endWithUsage ends run id completed at at with usage, and the ledger line
// the service writes with it.
func endWithUsage(t *testing.T, s runner.Store, r *runner.Run, token string, at int64, in, out int) {
	t.Helper()
	u := &runner.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
	e := &runner.UsageEntry{RunID: r.ID, TenantID: r.TenantID, ActorID: r.Actor.ID, Token: token, Model: "offline",
		At: at, InputTokens: int64(in), OutputTokens: int64(out), CostNanos: int64(in + 2*out)}
	if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &at, Usage: u, Ledger: e}); err != nil {
		t.Fatalf("Transition: %v", err)
	}
}

func testUsageLedger(t *testing.T, s runner.Store) {
	us, ok := s.(runner.UsageStore)
	if !ok {
		t.Fatal("the store keeps no usage ledger (runner.UsageStore)")
	}
	const base = int64(1_700_006_400) // a midnight, UTC
	type key struct {
		tenant string
		day    int64
	}
	want := map[key][3]int64{} // runs, input, output: from the runs as recorded
	for i := range 24 {
		tenant := []string{"acme", "globex"}[i%2]
		r := newRun(tenant, runner.StatusRunning)
		r.Actor.ID = fmt.Sprintf("u%d", i%3)
		if err := s.StartRun(ctx(t), r, false, false); err != nil {
			t.Fatal(err)
		}
		at := base + int64(i/8)*day + int64(i)*60
		endWithUsage(t, s, r, []string{"app", "ops"}[i%4/2], at, 10+i, 100*i)
		got := mustGet(t, s, r.ID)
		k := key{tenant, (at / day) * day}
		w := want[k]
		want[k] = [3]int64{w[0] + 1, w[1] + int64(got.Usage.InputTokens), w[2] + int64(got.Usage.OutputTokens)}
	}
	// A refused second end writes no second line.
	r := newRun("acme", runner.StatusRunning)
	if err := s.StartRun(ctx(t), r, false, false); err != nil {
		t.Fatal(err)
	}
	endWithUsage(t, s, r, "app", base+5, 7, 7)
	w := want[key{"acme", base}]
	want[key{"acme", base}] = [3]int64{w[0] + 1, w[1] + 7, w[2] + 7}
	at := base + 6
	err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusFailed, EndedAt: &at,
		Ledger: &runner.UsageEntry{RunID: r.ID, TenantID: "acme", At: at, InputTokens: 1000}})
	if err == nil {
		t.Fatal("a second terminal write was accepted")
	}

	rows, err := us.SumUsage(ctx(t), runner.UsageQuery{From: base, To: base + 10*day, ByTenant: true, Bucket: runner.BucketDay, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d (tenant × day): %+v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		w := want[key{r.TenantID, r.Start}]
		if got := [3]int64{r.Runs, r.InputTokens, r.OutputTokens}; got != w {
			t.Errorf("%s on day %d: runs, input, output = %v, want %v (the runs' recorded usage)", r.TenantID, r.Start, got, w)
		}
		if r.CostNanos != r.InputTokens+2*r.OutputTokens {
			t.Errorf("%s on day %d: cost %d, want %d", r.TenantID, r.Start, r.CostNanos, r.InputTokens+2*r.OutputTokens)
		}
	}

	// One tenant's sum holds none of another's.
	rows, err = us.SumUsage(ctx(t), runner.UsageQuery{TenantID: "globex", From: base, To: base + 10*day, ByTenant: true, ByActor: true, ByToken: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var runs int64
	for _, r := range rows {
		if r.TenantID != "globex" || r.Start != base || r.ActorID == "" || r.Token == "" {
			t.Errorf("globex's sum has row %+v", r)
		}
		runs += r.Runs
	}
	if runs != 12 || len(rows) != 6 { // 3 actors × 2 tokens
		t.Errorf("globex: %d runs in %d rows, want 12 in 6", runs, len(rows))
	}

	// Months, a range that leaves lines out, and the limit.
	rows, err = us.SumUsage(ctx(t), runner.UsageQuery{From: base + day, To: base + 2*day, Bucket: runner.BucketMonth, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Runs != 8 || rows[0].Start != 1_698_796_800 { // 2023-11-01
		t.Errorf("one day in months = %+v, want 8 runs in the month of 2023-11-01", rows)
	}
	rows, err = us.SumUsage(ctx(t), runner.UsageQuery{From: base, To: base + 10*day, Bucket: runner.BucketHour, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Errorf("limit 2 gave %d rows, want 3 (one more says there are more)", len(rows))
	}
}
