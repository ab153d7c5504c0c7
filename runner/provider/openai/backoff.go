package openai

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is the wait before retry number n (1 after the first failure):
// base doubled per retry, capped, with equal jitter so that runs failing
// together do not come back together; never shorter than the upstream's
// own Retry-After.
func backoff(base, ceiling time.Duration, n int, after time.Duration) time.Duration {
	d := ceiling
	if n < 32 && base<<(n-1) > 0 && base<<(n-1) < ceiling {
		d = base << (n - 1)
	}
	if d > 1 {
		d = d/2 + rand.N(d/2)
	}
	return max(d, after)
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
