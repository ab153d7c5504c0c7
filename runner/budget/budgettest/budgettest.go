// Package budgettest is the conformance suite of budgets' counters
// (runner.BudgetCounter): the process's (budget.Memory) and the fleet's
// (the PostgreSQL store) pass the same tests.
package budgettest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
)

// Run runs the suite. open returns a fresh counter, each call with no
// budget counted yet, and the ledger it fills budgets from (a line
// written there before a budget's first take counts against it).
func Run(t *testing.T, open func(t *testing.T) (runner.BudgetCounter, func(e runner.UsageEntry))) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, c runner.BudgetCounter, write func(runner.UsageEntry))
	}{
		{"DayWindowAndReset", testDay},
		{"RollingWindowReset", testRolling},
		{"SettleAndGiveBack", testSettle},
		{"FilledFromTheLedger", testSeed},
		{"ConcurrentTakesNeverPassTheLimit", testConcurrent},
		{"LoweredOnReload", testReload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, write := open(t)
			tc.fn(t, c, write)
		})
	}
}

// clock is a settable time.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func claim(tenant string, tokens int64) runner.QuotaClaim {
	return runner.QuotaClaim{TenantID: tenant, Token: "app", ActorID: "u1", Tokens: tokens}
}

func reserve(t *testing.T, s *budget.Set, c runner.QuotaClaim) (func(context.Context, int64, int64), runner.QuotaStatus, *runner.QuotaError) {
	t.Helper()
	settle, st, err := s.Reserve(t.Context(), c)
	if err == nil {
		return settle, st, nil
	}
	qe, ok := err.(*runner.QuotaError)
	if !ok {
		t.Fatalf("Reserve: %v", err)
	}
	return nil, st, qe
}

func testDay(t *testing.T, c runner.BudgetCounter, _ func(runner.UsageEntry)) {
	var clk clock
	clk.set(at("2026-03-04T22:00:00Z"))
	s := budget.New([]budget.Rule{{Name: "daily", Tenant: "day-t", Tokens: 100, Window: budget.Day}}, c, clk.now)
	for i := range 4 {
		_, st, qe := reserve(t, s, claim("day-t", 25))
		if qe != nil || st.Limit != 100 || st.Remaining != int64(75-25*i) {
			t.Fatalf("take %d: %+v %v", i, st, qe)
		}
	}
	_, _, qe := reserve(t, s, claim("day-t", 1))
	if qe == nil || qe.Budget != "daily" || qe.Remaining != 0 || !qe.Reset.Equal(at("2026-03-05T00:00:00Z")) {
		t.Fatalf("the 101st token: %+v", qe)
	}
	if _, st, qe := reserve(t, s, claim("other-t", 1000)); qe != nil || st.Limit != 0 {
		t.Fatalf("a tenant without budgets: %+v %v", st, qe)
	}
	clk.set(at("2026-03-05T00:00:01Z"))
	if _, st, qe := reserve(t, s, claim("day-t", 100)); qe != nil || st.Remaining != 0 {
		t.Fatalf("after the reset: %+v %v", st, qe)
	}
}

func testRolling(t *testing.T, c runner.BudgetCounter, _ func(runner.UsageEntry)) {
	var clk clock
	clk.set(at("2026-03-04T10:00:00Z"))
	s := budget.New([]budget.Rule{{Name: "hourly", Tenant: "roll-t", Tokens: 100, Every: time.Hour}}, c, clk.now)
	if _, _, qe := reserve(t, s, claim("roll-t", 60)); qe != nil {
		t.Fatal(qe)
	}
	clk.add(30 * time.Minute)
	if _, _, qe := reserve(t, s, claim("roll-t", 40)); qe != nil {
		t.Fatal(qe)
	}
	_, _, qe := reserve(t, s, claim("roll-t", 10))
	if qe == nil || !qe.Reset.Equal(at("2026-03-04T11:00:00Z")) {
		t.Fatalf("full: %+v, want a reset when the first take leaves the hour", qe)
	}
	clk.set(at("2026-03-04T11:00:30Z")) // the 60 left, the 40 not
	if _, st, qe := reserve(t, s, claim("roll-t", 60)); qe != nil || st.Remaining != 0 {
		t.Fatalf("after the first take left: %+v %v", st, qe)
	}
	if _, _, qe := reserve(t, s, claim("roll-t", 1)); qe == nil {
		t.Fatal("the 40 of 10:30 is still in the window")
	}
}

func testSettle(t *testing.T, c runner.BudgetCounter, _ func(runner.UsageEntry)) {
	var clk clock
	clk.set(at("2026-03-04T10:00:00Z"))
	s := budget.New([]budget.Rule{
		{Name: "tenant", Tenant: "set-t", Tokens: 100, Window: budget.Day},
		{Name: "actor", Tenant: "set-t", Actor: "u1", Tokens: 50, Window: budget.Month},
	}, c, clk.now)
	settle, st, qe := reserve(t, s, claim("set-t", 40))
	if qe != nil || st.Limit != 50 || st.Remaining != 10 {
		t.Fatalf("the actor's budget is the tightest: %+v %v", st, qe)
	}
	settle(t.Context(), 5, 0) // used far less than reserved
	if _, st, qe := reserve(t, s, claim("set-t", 45)); qe != nil || st.Remaining != 0 {
		t.Fatalf("after settling to 5: %+v %v", st, qe)
	}
	// The actor's budget refuses; the tenant's take is given back.
	if _, _, qe := reserve(t, s, claim("set-t", 1)); qe == nil || qe.Budget != "actor" {
		t.Fatalf("the actor's budget: %+v", qe)
	}
	other := claim("set-t", 50)
	other.ActorID = "u2"
	if _, st, qe := reserve(t, s, other); qe != nil || st.Remaining != 0 {
		t.Fatalf("another actor has the tenant's last 50: %+v %v", st, qe)
	}
}

func testSeed(t *testing.T, c runner.BudgetCounter, write func(runner.UsageEntry)) {
	now := time.Now()
	write(runner.UsageEntry{RunID: "run_seed1", TenantID: "seed-t", ActorID: "u1", Token: "app", At: now.Unix() - 10, InputTokens: 30, OutputTokens: 40})
	write(runner.UsageEntry{RunID: "run_seed2", TenantID: "seed-t", ActorID: "u1", Token: "app", At: now.Unix() - 3*86400, InputTokens: 500})
	s := budget.New([]budget.Rule{{Name: "rolling-day", Tenant: "seed-t", Tokens: 100, Every: 24 * time.Hour}}, c, nil)
	if _, st, qe := reserve(t, s, claim("seed-t", 30)); qe != nil || st.Remaining != 0 {
		t.Fatalf("70 spent today (the ledger), 30 asked: %+v %v", st, qe)
	}
	if _, _, qe := reserve(t, s, claim("seed-t", 1)); qe == nil {
		t.Fatal("a budget filled from the ledger took more than its limit")
	}
}

func testConcurrent(t *testing.T, c runner.BudgetCounter, _ func(runner.UsageEntry)) {
	s := budget.New([]budget.Rule{{Name: "c", Tenant: "conc-t", Tokens: 1000, Window: budget.Month}}, c, nil)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 40 {
				if _, _, qe := reserve(t, s, claim("conc-t", 7)); qe == nil {
					granted.Add(7)
				}
			}
		})
	}
	wg.Wait()
	if g := granted.Load(); g > 1000 || g < 1000-7 {
		t.Fatalf("granted %d of a budget of 1000 in takes of 7", g)
	}
}

func testReload(t *testing.T, c runner.BudgetCounter, _ func(runner.UsageEntry)) {
	rule := budget.Rule{Name: "r", Tenant: "reload-t", Tokens: 1000, Window: budget.Day}
	s := budget.New([]budget.Rule{rule}, c, nil)
	if _, _, qe := reserve(t, s, claim("reload-t", 600)); qe != nil {
		t.Fatal(qe)
	}
	rule.Tokens = 700 // a reload: a new set on the same counter
	s = budget.New([]budget.Rule{rule}, c, nil)
	if _, _, qe := reserve(t, s, claim("reload-t", 101)); qe == nil || qe.Remaining != 100 || qe.Limit != 700 {
		t.Fatalf("lowered to 700 with 600 spent: %+v", qe)
	}
	if _, _, qe := reserve(t, s, claim("reload-t", 100)); qe != nil {
		t.Fatal(qe)
	}
}
