// Package budget holds runs to usage budgets (runner.Quota): tokens
// and/or cost per tenant, optionally per token or actor, per calendar day,
// calendar month (UTC) or rolling period. A run's estimate is taken at
// admission and replaced by what it used when it ends; a run in flight is
// never cut off.
//
// Counters live where the hosts that share a budget see them: in the
// process for one host (Memory, filled from the ledger the first time a
// budget is met), in the database for a fleet (runner.BudgetCounter, the
// PostgreSQL store). A take is atomic in either: the check and the add
// are one step, so concurrent admissions never both pass on the same
// room. Overshoot is bounded by what was in flight when a budget was
// crossed: the difference between the runs' estimates and what they used
// (docs/operations.md "Budgets").
package budget

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/runedge/runedge/runner"
)

// Window kinds.
const (
	Day   = "day"
	Month = "month"
)

// Rule is one budget.
type Rule struct {
	// Name names it in refusals and on the operator page.
	Name string
	// Tenant is whose runs it counts; Token and Actor, when set, narrow
	// it to the runs of one token or actor of the tenant.
	Tenant, Token, Actor string
	// Tokens (input + output) and CostNanos (billionths of the prices'
	// unit) are the limits; 0 is none. A rule has at least one.
	Tokens, CostNanos int64
	// Window is Day, Month, or "" for a rolling Every.
	Window string
	Every  time.Duration

	// keys are the counters' keys by unit (tokens, cost), made once by
	// New rather than at every admission.
	keys [2]string
}

// slots is how many slots a rolling window is kept in: its reset is
// known to a fiftieth of the period, and its counter is at most this many
// rows.
const slots = 48

// span is the window of r at now: since (its first second), the slot
// now's spending goes to, the slot width (0: one slot) and when the
// window ends for a calendar window.
func (r *Rule) span(now time.Time) (since, slot, width int64, end time.Time) {
	u := now.UTC()
	switch r.Window {
	case Day:
		s := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
		return s.Unix(), s.Unix(), 0, s.AddDate(0, 0, 1)
	case Month:
		s := time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
		return s.Unix(), s.Unix(), 0, s.AddDate(0, 1, 0)
	}
	width = max(1, int64(r.Every/time.Second)/slots)
	slot = (now.Unix() / width) * width
	since = slot - (int64(r.Every/time.Second)/width-1)*width
	return since, slot, width, time.Time{}
}

// key is the counter of r's unit: one per budget and unit, named by what
// it counts, so a reload that keeps a budget keeps its counter.
func (r *Rule) key(unit string) string {
	w := r.Window
	if w == "" {
		w = strconv.FormatInt(int64(r.Every/time.Second), 10) + "s"
	}
	return "t=" + r.Tenant + ";k=" + r.Token + ";a=" + r.Actor + ";w=" + w + ";u=" + unit
}

func (r *Rule) matches(c *runner.QuotaClaim) bool {
	return r.Tenant == c.TenantID && (r.Token == "" || r.Token == c.Token) && (r.Actor == "" || r.Actor == c.ActorID)
}

// Set is the budgets of one configuration on a counter. It implements
// runner.Quota.
type Set struct {
	rules   []Rule
	counter runner.BudgetCounter
	now     func() time.Time
	// byTenant indexes rules: a request of a tenant without budgets pays
	// one map lookup.
	byTenant map[string][]int
}

var _ runner.Quota = (*Set)(nil)

// New returns the budgets rules on counter (now: nil for time.Now).
func New(rules []Rule, counter runner.BudgetCounter, now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	s := &Set{rules: slices.Clone(rules), counter: counter, now: now, byTenant: map[string][]int{}}
	for i := range rules {
		r := &s.rules[i]
		r.keys = [2]string{r.key("tokens"), r.key("cost")}
		s.byTenant[r.Tenant] = append(s.byTenant[r.Tenant], i)
	}
	return s
}

// Rules are the set's budgets.
func (s *Set) Rules() []Rule { return s.rules }

// taken is one take a reservation made, given back or settled later.
type taken struct {
	key    string
	slot   int64
	amount int64
	cost   bool
}

// Reserve implements runner.Quota.
func (s *Set) Reserve(ctx context.Context, c runner.QuotaClaim) (func(context.Context, int64, int64), runner.QuotaStatus, error) {
	var st runner.QuotaStatus
	idx := s.byTenant[c.TenantID]
	if len(idx) == 0 {
		return nil, st, nil
	}
	now := s.now()
	var done []taken
	giveBack := func() {
		for _, t := range done {
			// Best effort: a give-back that fails leaves the estimate
			// counted until the window passes (the safe side).
			s.counter.Add(context.WithoutCancel(ctx), t.key, t.slot, -t.amount)
		}
	}
	for _, i := range idx {
		r := &s.rules[i]
		if !r.matches(&c) {
			continue
		}
		since, slot, width, end := r.span(now)
		for _, u := range []struct {
			unit   string
			limit  int64
			amount int64
			cost   bool
		}{{"tokens", r.Tokens, c.Tokens, false}, {"cost", r.CostNanos, c.CostNanos, true}} {
			if u.limit <= 0 {
				continue
			}
			key := r.keys[0]
			if u.cost {
				key = r.keys[1]
			}
			used, oldest, ok, err := s.counter.Take(ctx, runner.BudgetTake{Key: key, Since: since, Slot: slot,
				Amount: u.amount, Limit: u.limit, Seed: runner.BudgetSeed{TenantID: r.Tenant, Token: r.Token,
					ActorID: r.Actor, Cost: u.cost, Width: width}})
			if err != nil {
				giveBack()
				return nil, st, fmt.Errorf("%w: budgets: %w", runner.ErrUnavailable, err)
			}
			reset := end
			if width > 0 { // rolling: room comes back as its oldest spending leaves
				if oldest == 0 {
					oldest = slot
				}
				reset = time.Unix(oldest+int64(r.Every/time.Second), 0)
			}
			if !ok {
				giveBack()
				return nil, st, &runner.QuotaError{Budget: r.Name, Unit: u.unit, Limit: u.limit,
					Remaining: max(0, u.limit-used), Reset: reset}
			}
			done = append(done, taken{key, slot, u.amount, u.cost})
			if !u.cost {
				left := max(0, u.limit-used-u.amount)
				if st.Limit == 0 || left < st.Remaining {
					st = runner.QuotaStatus{Limit: u.limit, Remaining: left, Reset: reset}
				}
			}
		}
	}
	if len(done) == 0 {
		return nil, st, nil
	}
	settle := func(ctx context.Context, tokens, cost int64) {
		for _, t := range done {
			d := tokens - t.amount
			if t.cost {
				d = cost - t.amount
			}
			if d != 0 {
				s.counter.Add(context.WithoutCancel(ctx), t.key, t.slot, d)
			}
		}
	}
	return settle, st, nil
}

// Left is a budget's state for the operator page.
type Left struct {
	Rule Rule
	// Unit is "tokens" or "cost"; Used and Limit are in it.
	Unit        string
	Used, Limit int64
	Reset       time.Time
}

// ErrNoPeek: the counter cannot be read without a take.
var ErrNoPeek = errors.New("budget: counter cannot be read")

// Peeker reads a counter without taking from it.
type Peeker interface {
	Peek(ctx context.Context, t runner.BudgetTake) (used, oldest int64, err error)
}

// Status reads every budget's counters (the operator page): what each
// has used of its limit in its current window.
func (s *Set) Status(ctx context.Context) ([]Left, error) {
	p, ok := s.counter.(Peeker)
	if !ok {
		return nil, ErrNoPeek
	}
	now := s.now()
	var out []Left
	for i := range s.rules {
		r := &s.rules[i]
		since, slot, width, end := r.span(now)
		for _, u := range []struct {
			unit  string
			limit int64
			cost  bool
		}{{"tokens", r.Tokens, false}, {"cost", r.CostNanos, true}} {
			if u.limit <= 0 {
				continue
			}
			used, oldest, err := p.Peek(ctx, runner.BudgetTake{Key: r.key(u.unit), Since: since, Slot: slot,
				Limit: u.limit, Seed: runner.BudgetSeed{TenantID: r.Tenant, Token: r.Token, ActorID: r.Actor, Cost: u.cost, Width: width}})
			if err != nil {
				return nil, err
			}
			reset := end
			if width > 0 {
				if oldest == 0 {
					oldest = slot
				}
				reset = time.Unix(oldest+int64(r.Every/time.Second), 0)
			}
			out = append(out, Left{Rule: *r, Unit: u.unit, Used: used, Limit: u.limit, Reset: reset})
		}
	}
	return out, nil
}
