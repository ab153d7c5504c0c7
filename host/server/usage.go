package server

import (
	"context"
	"time"

	"github.com/runedge/runedge/filters/auth"
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

// fleetStore is a store shared by a fleet that counts request rates.
type fleetStore interface {
	auth.FleetRate
	DropRates(ctx context.Context, before int64) error
}

// shareRates makes the tenant rate hold across the fleet when the store
// is shared (PostgreSQL), and drops the past windows' counts every 30 s.
func (s *Server) shareRates(ctx context.Context) {
	fs, ok := s.store.(fleetStore)
	if !ok {
		return
	}
	s.limits.SetFleet(fs)
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	// Joined like the purge loop: a drop in flight never meets a closed store.
	s.stopRates = func() { stop(); <-done }
	go func() {
		defer close(done)
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			}
			if err := fs.DropRates(rctx, time.Now().Unix()-60); err != nil && rctx.Err() == nil {
				s.log.Warn("limits: dropping past rate windows failed; retrying later", "err", err)
			}
		}
	}()
}
