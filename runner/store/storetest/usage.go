package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

// testLedgerLines ends runs in every way a run ends, at once, so that the
// store writes their ends in shared commits, and reads each run's line
// back (a tenant of its own per run): a run that ended with usage has
// exactly one line, with the values its end gave it; a run that ended
// without usage, lost its end to another terminal write or was marked
// interrupted at start-up has none beyond its winner's.
func testLedgerLines(t *testing.T, s runner.Store) {
	us := s.(runner.UsageStore)
	const at = int64(1_700_100_000)
	type end struct {
		tenant string
		t      runner.Transition
		twice  bool // a second terminal write races it (it loses or wins; one line)
	}
	var ends []end
	kinds := []struct {
		status runner.Status
		reason string
	}{
		{runner.StatusCompleted, ""}, {runner.StatusFailed, "provider_error"},
		{runner.StatusCancelled, "client_gone"}, {runner.StatusFailed, runner.ReasonInterrupted},
	}
	var ids []string
	for i := range 40 { // more lines than one statement of a batch may carry
		k := kinds[i%len(kinds)]
		tenant := fmt.Sprintf("ledger-%02d", i)
		r := newRun(tenant, runner.StatusRunning)
		r.Actor.ID = fmt.Sprintf("actor-%d", i%5)
		if err := s.StartRun(ctx(t), r, false, false); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		ended := at + int64(i)
		tr := runner.Transition{Status: k.status, Reason: k.reason, EndedAt: &ended}
		if i%3 != 2 { // every third ends without usage: no line
			u := &runner.Usage{InputTokens: 100 + i, OutputTokens: 7 * i, TotalTokens: 100 + 8*i,
				CachedTokens: i, ReasoningTokens: 2 * i}
			tr.Usage = u
			tr.Ledger = &runner.UsageEntry{RunID: r.ID, TenantID: tenant, ActorID: r.Actor.ID,
				Token: fmt.Sprintf("token-%d", i%3), Model: "provider/model-" + tenant, At: ended,
				InputTokens: int64(u.InputTokens), CachedTokens: int64(i), OutputTokens: int64(u.OutputTokens),
				ReasoningTokens: int64(2 * i), CostNanos: int64(1000*i + 1)}
		}
		ends = append(ends, end{tenant: tenant, t: tr, twice: i%4 == 1})
	}
	// Runs a restart marks interrupted: they end with no line.
	host := "ledger-host"
	var marked []string
	for i := range 3 {
		r := newRun(fmt.Sprintf("ledger-marked-%d", i), runner.StatusRunning)
		r.HostID = host
		if err := s.StartRun(ctx(t), r, false, false); err != nil {
			t.Fatal(err)
		}
		marked = append(marked, r.ID)
	}

	var wg sync.WaitGroup
	var won [40]atomic.Int32
	for i, e := range ends {
		n := 1
		if e.twice {
			n = 2
		}
		for range n {
			wg.Go(func() {
				err := s.Transition(ctx(t), ids[i], e.t)
				switch {
				case err == nil:
					won[i].Add(1)
				case !errors.Is(err, runner.ErrNotFound):
					t.Errorf("run %d's end: %v", i, err)
				}
			})
		}
	}
	wg.Go(func() {
		if n, err := s.MarkInterrupted(ctx(t), host, at); err != nil || n != 3 {
			t.Errorf("MarkInterrupted = %d, %v; want 3", n, err)
		}
	})
	wg.Wait()

	rows, err := us.SumUsage(ctx(t), runner.UsageQuery{From: at - day, To: at + day,
		ByTenant: true, ByActor: true, ByToken: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]runner.UsageRow{}
	for _, r := range rows {
		if _, dup := got[r.TenantID]; dup {
			t.Errorf("tenant %s has lines under two keys: %+v", r.TenantID, r)
		}
		got[r.TenantID] = r
	}
	for i, e := range ends {
		if n := won[i].Load(); n != 1 {
			t.Errorf("run %d: %d ends succeeded, want 1", i, n)
		}
		r, ok := got[e.tenant]
		l := e.t.Ledger
		if l == nil {
			if ok {
				t.Errorf("run %d ended without usage but has a line: %+v", i, r)
			}
			continue
		}
		want := runner.UsageRow{Start: at - day, TenantID: e.tenant, ActorID: l.ActorID, Token: l.Token, Runs: 1,
			InputTokens: l.InputTokens, CachedTokens: l.CachedTokens, OutputTokens: l.OutputTokens,
			ReasoningTokens: l.ReasoningTokens, CostNanos: l.CostNanos}
		if r != want {
			t.Errorf("run %d (%s, %q): line %+v, want %+v", i, e.t.Status, e.t.Reason, r, want)
		}
	}
	for i := range 3 {
		if r, ok := got[fmt.Sprintf("ledger-marked-%d", i)]; ok {
			t.Errorf("a run marked interrupted has a line: %+v", r)
		}
	}
	for _, id := range marked {
		if r := mustGet(t, s, id); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
			t.Errorf("marked run %s is %s (%s)", id, r.Status, r.StatusReason)
		}
	}
	if len(got) != 27 { // 40 runs, 13 of them without usage
		t.Errorf("%d tenants have lines, want 27", len(got))
	}
	// Each line at its own time: one per second from at, but none for the
	// runs without usage.
	rows, err = us.SumUsage(ctx(t), runner.UsageQuery{From: at, To: at + 40, Width: 1, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		i := int(r.Start - at)
		if i < 0 || i >= len(ends) || ends[i].t.Ledger == nil || r.Runs != 1 || r.InputTokens != ends[i].t.Ledger.InputTokens {
			t.Errorf("second %d: %+v", i, r)
		}
	}
}
