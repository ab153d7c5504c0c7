package runner

import "fmt"

// RateLimitError is a provider's refusal to take the call for now. It
// wraps ErrRateLimited and carries how long the upstream asked callers to
// wait, so the edge can pass its Retry-After on to the client instead of
// inventing one. Callers find it with errors.As on an interface with
// RetryAfter() int, so other packages may offer their own.
type RateLimitError struct {
	// Seconds is the upstream's Retry-After; 0 when it sent none.
	Seconds int
	// Detail says who refused and why, for the run record and the client.
	Detail string
}

func (e *RateLimitError) Error() string {
	if e.Seconds > 0 {
		return fmt.Sprintf("%s: %s (retry after %ds)", ErrRateLimited, e.Detail, e.Seconds)
	}
	return ErrRateLimited.Error() + ": " + e.Detail
}

// Unwrap makes errors.Is(err, ErrRateLimited) hold.
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// RetryAfter is the number of seconds to wait before retrying (0: unknown).
func (e *RateLimitError) RetryAfter() int { return e.Seconds }
