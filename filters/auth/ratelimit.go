package auth

import (
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxTenantBuckets bounds the tenant buckets a Limits keeps.
const DefaultMaxTenantBuckets = 10_000

// Rate is one token-bucket figure: RatePerSecond 0 disables it; Burst 0
// means the rate rounded up (at least 1).
type Rate struct {
	PerSecond float64
	Burst     int
}

func (r Rate) limit() (rate.Limit, int) {
	b := r.Burst
	if b < 1 {
		b = int(math.Max(1, math.Ceil(r.PerSecond)))
	}
	return rate.Limit(r.PerSecond), b
}

// Limits are the request rate limits: one bucket per token and one per
// tenant, and a request needs room in both, so an unbound token cannot
// escape its limit by naming another tenant, and a tenant reached through
// several tokens is limited once. A Limits outlives configuration
// generations (the server owns it, Configure applies a reload's figures),
// so a reload does not refill every bucket.
//
// Token buckets are bounded by the configured tokens. Tenant names come
// from the client, so their buckets are bounded (max): when full, buckets
// that have refilled are dropped first (dropping one loses nothing), then
// the least recently used.
type Limits struct {
	mu      sync.Mutex
	token   Rate
	tenant  Rate
	max     int
	tokens  map[string]*rate.Limiter
	tenants map[string]*tenantBucket
	// fleet, when set, holds the tenant rate across hosts (fleetrate.go).
	fleet fleetHolder
}

type tenantBucket struct {
	lim  *rate.Limiter
	used time.Time
}

// NewLimits returns limits keeping at most max tenant buckets
// (DefaultMaxTenantBuckets if max < 1). Nothing is limited until Configure.
func NewLimits(max int) *Limits {
	if max < 1 {
		max = DefaultMaxTenantBuckets
	}
	return &Limits{max: max, tokens: map[string]*rate.Limiter{}, tenants: map[string]*tenantBucket{}}
}

// Configure sets the figures; existing buckets keep their level and take
// the new rate.
func (l *Limits) Configure(token, tenant Rate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if token == l.token && tenant == l.tenant {
		return
	}
	l.token, l.tenant = token, tenant
	lim, burst := token.limit()
	for _, b := range l.tokens {
		b.SetLimit(lim)
		b.SetBurst(burst)
	}
	lim, burst = tenant.limit()
	for _, b := range l.tenants {
		b.lim.SetLimit(lim)
		b.lim.SetBurst(burst)
	}
}

// Enabled reports whether any limit applies.
func (l *Limits) Enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token.PerSecond > 0 || l.tenant.PerSecond > 0
}

// TenantBuckets is the number of tenant buckets kept (for tests).
func (l *Limits) TenantBuckets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tenants)
}

// Allow takes one request from the token's and the tenant's buckets, or
// takes none and says how many whole seconds to wait.
func (l *Limits) Allow(token, tenant string) (retryAfter int, ok bool) {
	l.mu.Lock()
	if l.token.PerSecond <= 0 && l.tenant.PerSecond <= 0 { // no limit: no clock read
		l.mu.Unlock()
		return 0, true
	}
	now := time.Now()
	var tb, nb *rate.Limiter
	if l.token.PerSecond > 0 {
		tb = l.tokens[token]
		if tb == nil {
			tb = rate.NewLimiter(l.token.limit())
			l.tokens[token] = tb
		}
	}
	if l.tenant.PerSecond > 0 {
		b := l.tenants[tenant]
		if b == nil {
			l.makeRoom(now)
			b = &tenantBucket{lim: rate.NewLimiter(l.tenant.limit())}
			l.tenants[tenant] = b
		}
		b.used = now
		nb = b.lim
	}
	l.mu.Unlock()

	var wait time.Duration
	var taken []*rate.Reservation
	for _, b := range []*rate.Limiter{tb, nb} {
		if b == nil {
			continue
		}
		r := b.ReserveN(now, 1)
		taken = append(taken, r)
		wait = max(wait, r.DelayFrom(now))
	}
	if wait > 0 {
		for _, r := range taken {
			r.CancelAt(now)
		}
		return int(math.Ceil(wait.Seconds())), false
	}
	return 0, true
}

// makeRoom drops tenant buckets when at the bound (under mu): every full
// one, else the least recently used eighth.
func (l *Limits) makeRoom(now time.Time) {
	if len(l.tenants) < l.max {
		return
	}
	_, burst := l.tenant.limit()
	for k, b := range l.tenants {
		if b.lim.TokensAt(now) >= float64(burst) {
			delete(l.tenants, k)
		}
	}
	if len(l.tenants) < l.max {
		return
	}
	type aged struct {
		key  string
		used time.Time
	}
	all := make([]aged, 0, len(l.tenants))
	for k, b := range l.tenants {
		all = append(all, aged{k, b.used})
	}
	n := max(1, len(all)/8)
	// A partial selection would do; the bound is reached rarely and the
	// sort is over at most max entries.
	slices.SortFunc(all, func(a, b aged) int { return a.used.Compare(b.used) })
	for _, a := range all[:n] {
		delete(l.tenants, a.key)
	}
}
