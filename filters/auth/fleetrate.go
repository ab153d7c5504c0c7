package auth

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// FleetRate counts requests where every host of a fleet sees the count
// (the PostgreSQL store): TakeRate adds one to key's count in window
// slot and says whether it was under limit, atomically across hosts.
type FleetRate interface {
	TakeRate(ctx context.Context, key string, slot, limit int64) (bool, error)
}

// fleetState is what SetFleet configured.
type fleetState struct {
	rate FleetRate
}

// SetFleet makes the tenant rate hold across hosts: after a request
// passes this host's buckets, it also takes one from its tenant's count
// in rate, in fixed windows of burst/rate seconds (at least one) of burst
// requests each. Over any T seconds a tenant is granted at most
// rate × T + burst requests by the whole fleet (the windows' edges allow
// one window more). nil turns it off.
func (l *Limits) SetFleet(rate FleetRate) {
	if rate == nil {
		l.fleet.Store(nil)
		return
	}
	l.fleet.Store(&fleetState{rate: rate})
}

// fleetHolder is Limits' field (a type of its own so that ratelimit.go
// names one field).
type fleetHolder = atomic.Pointer[fleetState]

// AllowFleet takes one request of tenant from the fleet's count when a
// tenant rate is set and the fleet shares it; a count that cannot be read
// lets the request through (this host's own buckets still hold).
func (l *Limits) AllowFleet(ctx context.Context, tenant string) (retryAfter int, ok bool) {
	f := l.fleet.Load()
	if f == nil {
		return 0, true
	}
	l.mu.Lock()
	r := l.tenant
	l.mu.Unlock()
	if r.PerSecond <= 0 {
		return 0, true
	}
	_, burst := r.limit()
	window := max(1, int64(math.Ceil(float64(burst)/r.PerSecond)))
	now := time.Now().Unix()
	slot := (now / window) * window
	ok, err := f.rate.TakeRate(ctx, "rate;t="+tenant, slot, int64(burst))
	if err != nil || ok {
		return 0, true
	}
	return int(slot + window - now), false
}
