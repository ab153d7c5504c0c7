package openai

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffGrowsWithinBounds(t *testing.T) {
	base, ceiling := 100*time.Millisecond, time.Second
	for n, full := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 40: time.Second, 70: time.Second} {
		for range 50 {
			d := backoff(base, ceiling, n, 0)
			if d < full/2 || d > full {
				t.Fatalf("retry %d waited %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d := backoff(base, ceiling, 1, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Fatalf("waited %v, shorter than the upstream's Retry-After", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(time.Minute).Format(http.TimeFormat)}}, time.Minute},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"999999999"}}, 24 * time.Hour},
		{http.Header{"Retry-After-Ms": {"1500.5"}, "Retry-After": {"9"}}, 1500*time.Millisecond + 500*time.Microsecond},
	} {
		if got := retryAfter(c.h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
	if ceilSeconds(1500*time.Millisecond) != 2 || ceilSeconds(2*time.Second) != 2 || ceilSeconds(0) != 0 {
		t.Fatal("ceilSeconds does not round up to whole seconds")
	}
}

func TestSchemaName(t *testing.T) {
	long := string(make([]byte, 70))
	for in, want := range map[string]string{"": "output", "person": "person", "a b/c": "a_b_c", "ünï": "_n_",
		long: string([]byte("________________________________________________________________"))} {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", in, got, want)
		}
	}
}
