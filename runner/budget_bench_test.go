package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/budget"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// BenchmarkBudgetAdmission is what a budget adds to a request, beside the
// request: a run through the service (as BenchmarkServiceRunNonStream)
// without budgets, the same run under a daily and a rolling token budget
// of its tenant (reserved at admission, settled at the end, in the
// process's counters), and the reservation and settlement alone.
// RATIONALE.md "Budgets" quotes the ratio.
func BenchmarkBudgetAdmission(b *testing.B) {
	open := func(b *testing.B, quota bool) *runner.Service {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "runs.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		svc, err := runner.NewService(b.Context(), runner.ServiceConfig{Store: st, Agent: agent.New(offline.New(offline.Config{}))})
		if err != nil {
			b.Fatal(err)
		}
		m := runner.Metering{Model: "offline", InputTokens: func(r runner.Request) int { return offline.CountInputTokens(agent.Messages(r)) },
			DefaultMaxOutput: 4096}
		if quota {
			m.Quota = rules(st)
		}
		svc.SetMetering(m)
		return svc
	}
	for _, c := range []struct {
		name  string
		quota bool
	}{{"request", false}, {"request_with_budget", true}} {
		b.Run(c.name, func(b *testing.B) {
			svc := open(b, c.quota)
			sp := spec("hello there", false)
			sp.TenantID = "acme"
			b.ReportAllocs()
			for b.Loop() {
				h, err := svc.Start(b.Context(), sp)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := finish(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("admission_alone", func(b *testing.B) {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "runs.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		q := rules(st)
		c := runner.QuotaClaim{TenantID: "acme", Token: "app", ActorID: "u1", Tokens: 4100}
		b.ReportAllocs()
		for b.Loop() {
			settle, _, err := q.Reserve(b.Context(), c)
			if err != nil {
				b.Fatal(err)
			}
			settle(b.Context(), 10, 0)
		}
	})
}

func rules(st runner.UsageStore) *budget.Set {
	return budget.New([]budget.Rule{
		{Name: "daily", Tenant: "acme", Tokens: 1 << 50, Window: budget.Day},
		{Name: "rolling", Tenant: "acme", Tokens: 1 << 50, Every: 3600_000_000_000},
	}, budget.NewMemory(st), nil)
}
