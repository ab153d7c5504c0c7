package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
)

// Budgets' counters for a fleet (runner.BudgetCounter): a row per budget
// and slot of its window in budget_slots (migration 12). A take is one
// round trip: a batch, which PostgreSQL runs as one implicit transaction,
// that takes the budget's advisory lock (held to the batch's end), fills
// the counter from the ledger the first time any host meets the budget,
// drops slots that left the window, then adds the amount only if the
// window has room for it, all under the lock: two hosts' takes of one
// budget are serialised, takes of different budgets are not.

var _ runner.BudgetCounter = (*Store)(nil)

const (
	budgetLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 7))`
	// budgetSeedSQL fills the counter from the ledger when the key has no
	// marker row (slot -1) yet. $6: the slot width (0: one slot, $2).
	budgetSeedSQL = `WITH m AS (INSERT INTO budget_slots (key, slot, amount) VALUES ($1, -1, 0)
			ON CONFLICT (key, slot) DO NOTHING RETURNING 1)
		INSERT INTO budget_slots (key, slot, amount)
		SELECT $1, CASE WHEN $6::BIGINT > 0 THEN (at / $6::BIGINT) * $6::BIGINT ELSE $2::BIGINT END,
			sum(CASE WHEN $7::BOOLEAN THEN cost_nanos ELSE input_tokens + output_tokens END)
		FROM usage_ledger WHERE EXISTS (SELECT 1 FROM m) AND at >= $2 AND tenant_id = $3
			AND ($4 = '' OR token = $4) AND ($5 = '' OR actor_id = $5)
		GROUP BY 2
		ON CONFLICT (key, slot) DO UPDATE SET amount = budget_slots.amount + EXCLUDED.amount`
	budgetDropSQL = `DELETE FROM budget_slots WHERE key = $1 AND slot >= 0 AND slot < $2`
	// budgetTakeSQL returns what the window held, its oldest slot with
	// spending, and whether $4 was added to slot $3 (room for it under $5).
	budgetTakeSQL = `WITH u AS (SELECT CAST(coalesce(sum(amount), 0) AS BIGINT) AS used,
			coalesce(min(slot) FILTER (WHERE amount > 0), 0) AS oldest
			FROM budget_slots WHERE key = $1 AND slot >= $2),
		ins AS (INSERT INTO budget_slots (key, slot, amount) SELECT $1, $3, $4 FROM u WHERE u.used + $4 <= $5
			ON CONFLICT (key, slot) DO UPDATE SET amount = budget_slots.amount + EXCLUDED.amount RETURNING 1)
		SELECT u.used, u.oldest, EXISTS (SELECT 1 FROM ins) FROM u`
	budgetPeekSQL = `SELECT CAST(coalesce(sum(amount), 0) AS BIGINT), coalesce(min(slot) FILTER (WHERE amount > 0), 0)
		FROM budget_slots WHERE key = $1 AND slot >= $2`
	budgetAddSQL = `INSERT INTO budget_slots (key, slot, amount) VALUES ($1, $2, $3)
		ON CONFLICT (key, slot) DO UPDATE SET amount = budget_slots.amount + EXCLUDED.amount`
)

// Take implements runner.BudgetCounter.
func (s *Store) Take(ctx context.Context, t runner.BudgetTake) (used, oldest int64, ok bool, err error) {
	err = s.budgetBatch(ctx, t, budgetTakeSQL, []any{t.Key, t.Since, t.Slot, t.Amount, t.Limit}, &used, &oldest, &ok)
	return used, oldest, ok, err
}

// Peek reads a counter without taking from it (budget.Peeker), filling it
// from the ledger when new.
func (s *Store) Peek(ctx context.Context, t runner.BudgetTake) (used, oldest int64, err error) {
	err = s.budgetBatch(ctx, t, budgetPeekSQL, []any{t.Key, t.Since}, &used, &oldest)
	return used, oldest, err
}

func (s *Store) budgetBatch(ctx context.Context, t runner.BudgetTake, last string, args []any, dst ...any) error {
	var b pgx.Batch
	b.Queue(budgetLockSQL, t.Key)
	b.Queue(budgetSeedSQL, t.Key, t.Since, t.Seed.TenantID, t.Seed.Token, t.Seed.ActorID, t.Seed.Width, t.Seed.Cost)
	b.Queue(budgetDropSQL, t.Key, t.Since)
	b.Queue(last, args...).QueryRow(func(r pgx.Row) error { return r.Scan(dst...) })
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return wrap("budget "+t.Key, err)
	}
	return nil
}

// Add implements runner.BudgetCounter.
func (s *Store) Add(ctx context.Context, key string, slot, delta int64) error {
	if _, err := s.pool.Exec(ctx, budgetAddSQL, key, slot, delta); err != nil {
		return wrap("budget "+key, err)
	}
	return nil
}

// rateTakeSQL counts one request in a window, only while the window is
// under $3: one statement, the row's lock serialising hosts.
const rateTakeSQL = `INSERT INTO budget_slots (key, slot, amount) VALUES ($1, $2, 1)
	ON CONFLICT (key, slot) DO UPDATE SET amount = budget_slots.amount + 1 WHERE budget_slots.amount < $3
	RETURNING amount`

// TakeRate counts one request of key in window slot when the window holds
// fewer than limit (auth.FleetRate). Windows that passed are dropped now
// and then (DropRates).
func (s *Store) TakeRate(ctx context.Context, key string, slot, limit int64) (bool, error) {
	var n int64
	err := s.pool.QueryRow(ctx, rateTakeSQL, key, slot, limit).Scan(&n)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, wrap("rate "+key, err)
	}
	return true, nil
}

// DropRates forgets rate windows that ended before the Unix time before.
func (s *Store) DropRates(ctx context.Context, before int64) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM budget_slots WHERE key LIKE 'rate;%' AND slot >= 0 AND slot < $1`, before)
	if err != nil {
		return wrap("drop rates", err)
	}
	return nil
}
