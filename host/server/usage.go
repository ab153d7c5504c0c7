package server

import (
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
)

// usageOf returns st's usage ledger, nil when it keeps none.
func usageOf(st runner.Store) runner.UsageStore {
	u, _ := st.(runner.UsageStore)
	return u
}

// budgetCounter is where budgets are counted: in the store when it is
// shared by a fleet (PostgreSQL), else in this process, filled from the
// ledger.
func budgetCounter(st runner.Store) runner.BudgetCounter {
	if c, ok := st.(runner.BudgetCounter); ok {
		return c
	}
	return budget.NewMemory(usageOf(st))
}

// meter applies cfg's usage section (prices, budgets) to the run service:
// the next request is admitted under it.
func (s *Server) meter(cfg *config.Config) {
	m := runner.Metering{Model: cfg.ModelLabel(), Price: cfg.RunPrice(), InputTokens: api.InputTokenCounter(cfg),
		DefaultMaxOutput: cfg.Usage.DefaultMaxOutputTokens}
	if rules := cfg.BudgetRules(); len(rules) > 0 {
		if s.budgets == nil {
			s.budgets = budgetCounter(s.store)
		}
		m.Quota = budget.New(rules, s.budgets, nil)
	}
	s.runs.SetMetering(m)
}

// Budgets is the budgets of the current configuration (nil: none), for
// the operator page.
func (s *Server) Budgets() *budget.Set {
	g := s.gen.Load()
	if g == nil {
		return nil
	}
	if q, ok := s.runs.Metering().Quota.(*budget.Set); ok {
		return q
	}
	return nil
}
