package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// The usage ledger: one line per run that reported usage, attributed to
// the run's tenant, actor and token, written by the store in the same
// commit as the run's outcome (Transition.Ledger), and summed by the store
// (UsageStore). Budgets (Quota) are held against the same figures.

// UsageEntry is one run's line in the usage ledger.
type UsageEntry struct {
	RunID, TenantID, ActorID string
	// Token is the name of the configured token the run was asked for
	// with (never its secret).
	Token string
	// Model is what served the run: the provider and its upstream model
	// ("openai/gpt-4o-mini", "offline").
	Model string
	// At is when the run ended (Unix seconds).
	At int64
	// Tokens as the upstream reported them: cached is part of input,
	// reasoning part of output.
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens int64
	// CostNanos is the cost in billionths of the prices' currency unit; 0
	// when no price is configured for Model.
	CostNanos int64
}

// Total is the entry's tokens as budgets count them: input plus output.
func (e *UsageEntry) Total() int64 { return e.InputTokens + e.OutputTokens }

// Usage buckets (UsageQuery.Bucket).
const (
	BucketNone  = ""
	BucketHour  = "hour"
	BucketDay   = "day"
	BucketMonth = "month"
)

// UsageQuery sums the ledger. TenantID "" sums every tenant (admin).
type UsageQuery struct {
	TenantID string
	// Token and ActorID, when set, keep only that token's or actor's lines.
	Token, ActorID string
	// From and To bound the lines' At: [From, To).
	From, To int64
	// ByTenant, ByActor and ByToken group by those; without any, all lines
	// of a bucket are one row.
	ByTenant, ByActor, ByToken bool
	// Bucket groups by hour, day or month (UTC); BucketNone makes one
	// bucket of the whole range, unless Width (seconds) groups by fixed
	// spans since the Unix epoch.
	Bucket string
	Width  int64
	// Limit bounds the rows (the store returns at most Limit+1, so a
	// caller can tell there were more).
	Limit int
}

// UsageRow is one group of the sum. Start is the bucket's start (From
// without buckets); the keys not grouped by are "".
type UsageRow struct {
	Start                                                    int64
	TenantID, ActorID, Token                                 string
	Runs                                                     int64
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens int64
	CostNanos                                                int64
}

// UsageStore is implemented by stores that keep the ledger (both of
// runedge's): sums are computed by the database (GROUP BY), never by
// reading lines into the process.
type UsageStore interface {
	SumUsage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
}

// UsagePage is a sum as the usage API answers it.
type UsagePage struct {
	Rows    []UsageRow
	HasMore bool
}

// MaxUsageRows bounds the rows of one usage answer.
const MaxUsageRows = 10_000

// Usage sums the ledger for sc: a tenant's caller sees only its tenant,
// an admin every tenant (or q.TenantID's).
func (s *Service) Usage(ctx context.Context, sc Scope, q UsageQuery) (UsagePage, error) {
	if !sc.Admin {
		if sc.TenantID == "" {
			return UsagePage{}, nil // "" would sum every tenant: fail closed
		}
		q.TenantID = sc.TenantID
	}
	us := s.usage
	if us == nil {
		return UsagePage{}, nil
	}
	if q.Limit <= 0 || q.Limit > MaxUsageRows {
		q.Limit = MaxUsageRows
	}
	rows, err := us.SumUsage(ctx, q)
	if err != nil {
		return UsagePage{}, fmt.Errorf("%w: usage: %w", ErrUnavailable, err)
	}
	p := UsagePage{Rows: rows}
	if len(rows) > q.Limit {
		p.Rows, p.HasMore = rows[:q.Limit], true
	}
	return p, nil
}

// Price is what a model's tokens cost, per million, in one currency unit.
// Cached input tokens cost CachedInput (Input when 0); reasoning tokens
// are output tokens and cost Output.
type Price struct {
	Input, CachedInput, Output float64
}

// CostNanos prices e's tokens, in billionths of the unit.
func (p Price) CostNanos(e *UsageEntry) int64 {
	cached := p.CachedInput
	if cached == 0 {
		cached = p.Input
	}
	// Per million tokens → per token in nanos: × 1e9 / 1e6.
	c := float64(e.InputTokens-e.CachedTokens)*p.Input + float64(e.CachedTokens)*cached + float64(e.OutputTokens)*p.Output
	return int64(math.Round(c * 1000))
}

// Metering is how the service prices runs and holds them to budgets. The
// host sets it at start and at every reload (SetMetering); the zero value
// prices nothing and holds nothing.
type Metering struct {
	// Model is what the ledger records as a run's model (UsageEntry.Model).
	Model string
	// Price prices Model's tokens (zero: unpriced, cost 0).
	Price Price
	// Quota holds runs to budgets; nil: none.
	Quota Quota
	// InputTokens counts what the agent is given for a request (the
	// estimate reserved at admission, with the request's
	// max_output_tokens or DefaultMaxOutput).
	InputTokens      func(Request) int
	DefaultMaxOutput int
}

// SetMetering swaps the service's metering; runs in flight settle with the
// quota they reserved from.
func (s *Service) SetMetering(m Metering) { s.metering.Store(&m) }

func (s *Service) meter() *Metering {
	if m := s.metering.Load(); m != nil {
		return m
	}
	return &noMetering
}

var noMetering Metering

// meteringHolder is the Service's field (a type of its own, so service.go
// names one field for it).
type meteringHolder = atomic.Pointer[Metering]

// ledgerEntry is the ledger line of h's run for usage u, or nil when
// there is none to write.
func (h *Handle) ledgerEntry(u *Usage, at int64) *UsageEntry {
	if u == nil || (u.InputTokens == 0 && u.OutputTokens == 0) {
		return nil
	}
	m := h.meterAt
	if m == nil {
		m = &noMetering
	}
	e := &UsageEntry{RunID: h.run.ID, TenantID: h.run.TenantID, ActorID: h.run.Actor.ID, Token: h.token,
		Model: m.Model, At: at, InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)}
	e.CachedTokens, e.ReasoningTokens = UsageDetails(u)
	e.CostNanos = m.Price.CostNanos(e)
	return e
}

// UsageDetails are the cached input and reasoning output tokens of u as
// the upstream reported them (0 when it reported none): the one place the
// ledger and the metrics read them.
func UsageDetails(u *Usage) (cached, reasoning int64) {
	if u == nil {
		return 0, 0
	}
	return int64(u.CachedTokens), int64(u.ReasoningTokens)
}

// ErrInsufficientQuota: a budget has no room for the run (429
// insufficient_quota). The run is not created.
var ErrInsufficientQuota = errors.New("insufficient quota")

// QuotaError is a refusal by a budget: which one, its figures and when it
// has room again.
type QuotaError struct {
	// Budget names the budget as configured.
	Budget string
	// Unit is "tokens" or "cost".
	Unit string
	// Limit, Remaining in Unit (cost in billionths of the currency unit).
	Limit, Remaining int64
	// Reset is when the window has room again (the next window's start,
	// or, for a rolling window, when its oldest spending leaves it).
	Reset time.Time
}

func (e *QuotaError) Error() string {
	left := fmt.Sprintf("%d of %d tokens", e.Remaining, e.Limit)
	if e.Unit != "tokens" {
		left = fmt.Sprintf("%.6g of %.6g in cost", float64(e.Remaining)/1e9, float64(e.Limit)/1e9)
	}
	return fmt.Sprintf("%s: budget %q has %s left, too little for this request; it resets at %s", ErrInsufficientQuota,
		e.Budget, left, e.Reset.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrInsufficientQuota) hold.
func (e *QuotaError) Unwrap() error { return ErrInsufficientQuota }

// QuotaClaim is what a run asks of the budgets at admission.
type QuotaClaim struct {
	TenantID, Token, ActorID string
	// Tokens is the estimate: the input tokens counted plus the output
	// allowed; CostNanos is its price.
	Tokens, CostNanos int64
}

// QuotaStatus is the tightest token budget a claim met: what the
// x-ratelimit-*-tokens headers tell. Limit 0: no token budget applied.
type QuotaStatus struct {
	Limit, Remaining int64
	Reset            time.Time
}

// Quota holds runs to budgets (runner/budget implements it).
type Quota interface {
	// Reserve takes claim's estimate from every budget that applies, or
	// from none and returns an error wrapping ErrInsufficientQuota (a
	// *QuotaError), or ErrUnavailable when the budgets' store cannot be
	// reached. settle replaces the estimate by what the run used; it is
	// called exactly once (with zeros when the run never started).
	Reserve(ctx context.Context, claim QuotaClaim) (settle func(ctx context.Context, tokens, costNanos int64), st QuotaStatus, err error)
}

// BudgetTake is one atomic take from a budget's counter: add Amount to
// slot Slot of Key when the key's slots at or after Since hold at most
// Limit-Amount (Force: add it whatever they hold).
type BudgetTake struct {
	Key                 string
	Since, Slot, Amount int64
	Limit               int64
	// Seed is the ledger's part of the budget, summed into the counter
	// the first time a store sees Key: its tenant, token and actor, Cost
	// (cost, not tokens), and Width (the slot width in seconds; 0: one
	// slot at Since).
	Seed BudgetSeed
}

// BudgetSeed says which ledger lines a budget counts.
type BudgetSeed struct {
	TenantID, Token, ActorID string
	Cost                     bool
	Width                    int64
}

// BudgetCounter keeps budgets' counters where every host sees them (the
// PostgreSQL store): a take is atomic across hosts.
type BudgetCounter interface {
	// Take returns what the key held before (used), the start of its
	// oldest slot with spending (0: none), and whether Amount was added.
	Take(ctx context.Context, t BudgetTake) (used, oldest int64, ok bool, err error)
	// Add adds delta (negative to give back) to a slot of key.
	Add(ctx context.Context, key string, slot, delta int64) error
}

// Metering is the service's current metering.
func (s *Service) Metering() Metering { return *s.meter() }
