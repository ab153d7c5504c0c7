package ui

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// One network's failures close that network, not another; an account
// opens a bounded number of sessions per window; windows end.
func TestThrottleKeys(t *testing.T) {
	now := time.Unix(1e9, 0)
	th := newThrottle()
	th.now = func() time.Time { return now }
	// 20 failures over 20 addresses of one IPv6 /64: its network is closed.
	for i := range th.perNet {
		th.failed(fmt.Sprintf("2001:db8::%x", i+1))
	}
	if _, ok := th.allow("2001:db8::ffff"); ok {
		t.Fatal("a new address of a network with 20 failures was allowed")
	}
	if _, ok := th.allow("2001:db8:0:1::1"); !ok {
		t.Fatal("another network was refused")
	}
	for range th.perAccount {
		if _, ok := th.opened("ops"); !ok {
			t.Fatal("login refused under the account's limit")
		}
	}
	if _, ok := th.opened("ops"); ok {
		t.Fatal("an account opened more sessions than perAccount in one window")
	}
	if _, ok := th.opened("other"); !ok {
		t.Fatal("another account was refused")
	}
	now = now.Add(th.window)
	if _, ok := th.allow("2001:db8::ffff"); !ok {
		t.Fatal("refused after the window ended")
	}
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct{ peer, xff, want string }{
		{"192.0.2.1:5000", "198.51.100.1", "192.0.2.1"},             // untrusted peer: header ignored
		{"10.1.1.1:5000", "198.51.100.1", "198.51.100.1"},           // one trusted proxy
		{"10.1.1.1:5000", "6.6.6.6, 198.51.100.1", "198.51.100.1"},  // the client's own entry is skipped
		{"10.1.1.1:5000", "198.51.100.1, 10.2.2.2", "198.51.100.1"}, // two trusted hops
		{"10.1.1.1:5000", "", "10.1.1.1"},                           // no header: the proxy itself
		{"[::ffff:10.1.1.1]:5000", "198.51.100.9", "198.51.100.9"},  // IPv4-mapped peer
	} {
		r := httptest.NewRequest("POST", "/ui/login", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := clientAddr(r, trusted); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
}
