package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/runedge/runedge/host/config"
)

// Failed logins from many addresses lock out those addresses, not the
// page: 100 failures from 20 addresses (behind a configured proxy, which
// names them in X-Forwarded-For) leave a correct login from another
// address working.
func TestUILoginThrottleNoGlobalLockout(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Admin.UI.TrustedProxies = []string{"127.0.0.1/32"} })
	for i := range 100 {
		addr := fmt.Sprintf("203.0.%d.%d", 113+i%20/5, 1+i%20)
		res := h.uiLogin("guess", "X-Forwarded-For", addr)
		if res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("failure %d from %s: %d", i, addr, res.StatusCode)
		}
	}
	// A guessing address is refused, right token or not.
	if res := h.uiLogin(tokAdmin, "X-Forwarded-For", "203.0.113.1"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a guessing address with the right token: %d, want 429", res.StatusCode)
	}
	// Another address logs in.
	if res := h.uiLogin(tokAdmin, "X-Forwarded-For", "198.51.100.7"); res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("a correct login from another address after 100 failures elsewhere: %d, want 303", res.StatusCode)
	}
	// The address is the proxy's last hop: a client's own X-Forwarded-For
	// entries before it do not make a new address.
	for i := range 5 {
		h.uiLogin("guess", "X-Forwarded-For", fmt.Sprintf("10.9.9.%d, 198.51.100.50", i))
	}
	if res := h.uiLogin(tokAdmin, "X-Forwarded-For", "10.9.9.99, 198.51.100.50"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a client that forges X-Forwarded-For entries escaped its address's limit: %d", res.StatusCode)
	}
}

// Without trusted proxies, X-Forwarded-For is the client's own word and is
// ignored: it cannot spread one address's failures over made-up ones.
func TestUILoginForwardedUntrusted(t *testing.T) {
	h := start(t, nil)
	for i := range 5 {
		if res := h.uiLogin("guess", "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, res.StatusCode)
		}
	}
	if res := h.uiLogin(tokAdmin, "X-Forwarded-For", "198.51.100.7"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("X-Forwarded-For from an untrusted peer was believed: %d, want 429", res.StatusCode)
	}
}
