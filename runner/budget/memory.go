package budget

import (
	"context"
	"sync"

	"github.com/runedge/runedge/runner"
)

// Memory keeps budgets' counters in the process: the counter of a host
// that shares its budgets with none (the SQLite store). The first take of
// a budget fills its counter from the ledger, so a restart forgets
// nothing that ended; the counters outlive configurations (a reload keeps
// what was spent). Keys come from the configuration, so their number is
// bounded by it.
type Memory struct {
	ledger runner.UsageStore // nil: start every counter at 0

	mu   sync.Mutex
	keys map[string]*series
}

type series struct {
	slots map[int64]int64
}

var (
	_ runner.BudgetCounter = (*Memory)(nil)
	_ Peeker               = (*Memory)(nil)
)

// NewMemory returns counters filled from ledger when first met.
func NewMemory(ledger runner.UsageStore) *Memory {
	return &Memory{ledger: ledger, keys: map[string]*series{}}
}

// series returns key's slots, filling them from the ledger the first
// time (under mu).
func (m *Memory) series(ctx context.Context, t *runner.BudgetTake) (*series, error) {
	if s := m.keys[t.Key]; s != nil {
		return s, nil
	}
	s := &series{slots: map[int64]int64{}}
	if m.ledger != nil {
		q := runner.UsageQuery{TenantID: t.Seed.TenantID, Token: t.Seed.Token, ActorID: t.Seed.ActorID,
			From: t.Since, To: 1 << 62, Width: t.Seed.Width, Limit: runner.MaxUsageRows}
		rows, err := m.ledger.SumUsage(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			slot := t.Since
			if t.Seed.Width > 0 {
				slot = r.Start
			}
			if t.Seed.Cost {
				s.slots[slot] += r.CostNanos
			} else {
				s.slots[slot] += r.InputTokens + r.OutputTokens
			}
		}
	}
	m.keys[t.Key] = s
	return s, nil
}

// sum is what s holds at or after since, and its oldest slot with
// spending (0: none); slots before since are dropped.
func (s *series) sum(since int64) (used, oldest int64) {
	for slot, n := range s.slots {
		if slot < since {
			delete(s.slots, slot)
			continue
		}
		used += n
		if n > 0 && (oldest == 0 || slot < oldest) {
			oldest = slot
		}
	}
	return used, oldest
}

// Take implements runner.BudgetCounter.
func (m *Memory) Take(ctx context.Context, t runner.BudgetTake) (used, oldest int64, ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.series(ctx, &t)
	if err != nil {
		return 0, 0, false, err
	}
	used, oldest = s.sum(t.Since)
	if used+t.Amount > t.Limit {
		return used, oldest, false, nil
	}
	s.slots[t.Slot] += t.Amount
	return used, oldest, true, nil
}

// Add implements runner.BudgetCounter.
func (m *Memory) Add(_ context.Context, key string, slot, delta int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.keys[key]; s != nil {
		s.slots[slot] += delta
	}
	return nil
}

// Peek implements Peeker.
func (m *Memory) Peek(ctx context.Context, t runner.BudgetTake) (used, oldest int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.series(ctx, &t)
	if err != nil {
		return 0, 0, err
	}
	used, oldest = s.sum(t.Since)
	return used, oldest, nil
}
