package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
)

// TestRateLimitsPerTokenAndTenant: a token's limit holds whatever tenant
// it names, a tenant's limit holds whatever token it comes with, and both
// outlive a reload.
func TestRateLimitsPerTokenAndTenant(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.RatePerSecond, c.Limits.Burst = 0.001, 1
		c.Limits.TenantRatePerSecond, c.Limits.TenantBurst = 0.001, 1
	})
	get := func(token, tenant string) int {
		res := h.do("GET", "/v1/models", "", "Authorization", "Bearer "+token, "x-service-tenant-id", tenant)
		body(t, res)
		return res.StatusCode
	}
	if c := get(tokAcme, "acme"); c != 200 {
		t.Fatalf("first acme request: %d", c)
	}
	// Another token, same tenant: the tenant's bucket is empty.
	if c := get(tokApp, "acme"); c != http.StatusTooManyRequests {
		t.Fatalf("tenant acme through another token: %d, want 429", c)
	}
	if c := get(tokApp, "t1"); c != 200 {
		t.Fatalf("t1: %d", c)
	}
	// The same unbound token, a new tenant name each time: the token's
	// bucket (burst 1) is empty now.
	if c := get(tokApp, "t2"); c != http.StatusTooManyRequests {
		t.Fatalf("an unbound token escaped its limit by naming tenant t2: %d", c)
	}
	// A reload (same figures) does not refill the buckets.
	if err := h.srv.Reload(context.Background(), h.cfg); err != nil {
		t.Fatal(err)
	}
	if c := get(tokAcme, "acme"); c != http.StatusTooManyRequests {
		t.Fatalf("after a reload, acme: %d, want 429", c)
	}
}

// TestMaxInFlightPerTenant: one tenant cannot take every slot.
func TestMaxInFlightPerTenant(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.MaxInFlightPerTenant = 1
		c.Provider.Offline.TokenDelay = config.Dur(100 * time.Millisecond)
	})
	first := make(chan *http.Response, 1)
	go func() {
		first <- h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"a b c d e f"}]}`,
			"x-service-tenant-id", "busy")
	}()
	deadline := time.Now().Add(10 * time.Second)
	for h.srv.Runs().InFlight() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	wantError(t, h.do("POST", "/v1/chat/completions", chatBody, "x-service-tenant-id", "busy"),
		http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
	if res := h.do("POST", "/v1/chat/completions", chatBody, "x-service-tenant-id", "other"); res.StatusCode != 200 {
		t.Fatalf("another tenant: %d %s", res.StatusCode, body(t, res))
	}
	if res := <-first; res.StatusCode != 200 {
		t.Fatalf("first: %d", res.StatusCode)
	}
}
