package postgres_test

import (
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget/budgettest"
)

// The fleet's budget counters pass the suite the process's pass.
func TestBudgetCounter(t *testing.T) {
	budgettest.Run(t, func(t *testing.T) (runner.BudgetCounter, func(runner.UsageEntry)) {
		st := openTemp(t)
		return st, func(e runner.UsageEntry) {
			r := &runner.Run{ID: runner.NewID(contract.RunPrefix), Status: runner.StatusRunning, TenantID: e.TenantID, CreatedAt: e.At}
			if err := st.StartRun(t.Context(), r, false, false); err != nil {
				t.Fatal(err)
			}
			e.RunID = r.ID
			if err := st.Transition(t.Context(), r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &e.At,
				Usage: &runner.Usage{InputTokens: int(e.InputTokens), OutputTokens: int(e.OutputTokens)}, Ledger: &e}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
