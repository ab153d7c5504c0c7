package auth

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter keeps one token bucket per token and tenant. Buckets are created on
// first use; the key space is bounded by the configured tokens times the
// tenants they act for.
type limiter struct {
	mu      sync.Mutex
	rps     rate.Limit
	burst   int
	buckets map[string]*rate.Limiter
}

func newLimiter(rps float64, burst int) *limiter {
	if burst < 1 {
		burst = int(math.Max(1, math.Ceil(rps)))
	}
	return &limiter{rps: rate.Limit(rps), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// allow takes one request from key's bucket, or says how many whole seconds
// to wait before the next one would be allowed.
func (l *limiter) allow(key string) (retryAfter int, ok bool) {
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(l.rps, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	now := time.Now()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return int(math.Ceil(d.Seconds())), false
	}
	return 0, true
}
