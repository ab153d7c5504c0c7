package ui

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// throttle slows token guessing at the login form. Admin tokens are long
// random strings, so this is defence in depth, not the main guard; it also
// keeps a broken script from filling the log. Only failures count:
//
//   - per client address, perIP failures per window; then that address is
//     refused until its window ends, right token or not;
//   - over all addresses, global failures per window, so guessing from many
//     addresses is no faster than from a few.
//
// Counters are fixed windows in a map of at most maxKeys addresses; when it
// is full of live windows, new addresses are refused (fail closed).
type throttle struct {
	perIP, global int
	window        time.Duration
	maxKeys       int
	now           func() time.Time

	mu    sync.Mutex
	ips   map[string]*window
	total window
}

type window struct {
	count int
	reset time.Time
}

func newThrottle() *throttle {
	return &throttle{perIP: 5, global: 100, window: 5 * time.Minute, maxKeys: 10_000, now: time.Now,
		ips: map[string]*window{}}
}

// allow reports whether a login attempt from ip may be checked, and if not
// how long until it may.
func (t *throttle) allow(ip string) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Before(t.total.reset) && t.total.count >= t.global {
		return t.total.reset.Sub(now), false
	}
	if w := t.ips[ip]; w != nil && now.Before(w.reset) && w.count >= t.perIP {
		return w.reset.Sub(now), false
	}
	if _, known := t.ips[ip]; !known && len(t.ips) >= t.maxKeys {
		t.sweep(now)
		if len(t.ips) >= t.maxKeys {
			return t.window, false
		}
	}
	return 0, true
}

// failed counts a wrong token from ip.
func (t *throttle) failed(ip string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if !now.Before(t.total.reset) {
		t.total = window{reset: now.Add(t.window)}
	}
	t.total.count++
	w := t.ips[ip]
	if w == nil || !now.Before(w.reset) {
		if w == nil && len(t.ips) >= t.maxKeys {
			return // allow refuses new addresses meanwhile
		}
		w = &window{reset: now.Add(t.window)}
		t.ips[ip] = w
	}
	w.count++
}

func (t *throttle) sweep(now time.Time) {
	for k, w := range t.ips {
		if !now.Before(w.reset) {
			delete(t.ips, k)
		}
	}
}

// clientIP is the peer's address, never a forwarding header (the client
// writes those).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
