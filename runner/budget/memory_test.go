package budget_test

import (
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
	"github.com/runedge/runedge/runner/budget/budgettest"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// The process's counters, filled from a real SQLite ledger.
func TestMemory(t *testing.T) {
	budgettest.Run(t, func(t *testing.T) (runner.BudgetCounter, func(runner.UsageEntry)) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return budget.NewMemory(st), func(e runner.UsageEntry) { writeLine(t, st, e) }
	})
}

// writeLine ends a run of e's tenant with e as its ledger line.
func writeLine(t *testing.T, st runner.Store, e runner.UsageEntry) {
	t.Helper()
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
