package ui

import (
	"net/netip"
	"sync"
	"time"
)

// throttle slows token guessing at the login form. Admin tokens are long
// random strings, so this is defence in depth, not the main guard; it also
// keeps a broken script from filling the log. Only failures count, and
// only against where they came from, never against everyone: a global
// limit would let anyone lock every operator out (100 failures from 20
// addresses did), so there is none.
//
//   - per client address, perAddr failures per window; then that address
//     is refused until its window ends, right token or not;
//   - per network (the address's /24 for IPv4, /64 for IPv6: what one
//     client usually holds), perNet failures per window, so one host with
//     many addresses guesses no faster than a few;
//   - per account: a token (by name) opens at most perAccount sessions per
//     window. A failed login names no account (the token is the
//     credential), so this bounds what one token, leaked or scripted, can
//     do to the session table that every operator shares.
//
// Counters are fixed windows in a map of at most maxKeys keys; when it is
// full of live windows, new keys are refused (fail closed).
type throttle struct {
	perAddr, perNet, perAccount int
	window                      time.Duration
	maxKeys                     int
	now                         func() time.Time

	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	count int
	reset time.Time
}

func newThrottle() *throttle {
	return &throttle{perAddr: 5, perNet: 20, perAccount: 30, window: 5 * time.Minute, maxKeys: 10_000,
		now: time.Now, keys: map[string]*window{}}
}

// allow reports whether a login attempt from addr may be checked, and if
// not how long until it may.
func (t *throttle) allow(addr string) (time.Duration, bool) {
	ak, nk := addrKeys(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.under(t.now(), limit{ak, t.perAddr}, limit{nk, t.perNet})
}

// failed counts a wrong token from addr.
func (t *throttle) failed(addr string) {
	ak, nk := addrKeys(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.count(now, ak)
	t.count(now, nk)
}

// opened reports whether the named token may open another session now,
// and counts it if so.
func (t *throttle) opened(token string) (time.Duration, bool) {
	k := "token:" + token
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if wait, ok := t.under(now, limit{k, t.perAccount}); !ok {
		return wait, false
	}
	t.count(now, k)
	return 0, true
}

// limit is a throttle key and the failures (or sessions) it may have per
// window.
type limit struct {
	key string
	max int
}

// under reports whether every key is under its limit and, if not, how
// long until it is. Called with mu held.
func (t *throttle) under(now time.Time, ls ...limit) (time.Duration, bool) {
	for _, l := range ls {
		w := t.keys[l.key]
		if w != nil && now.Before(w.reset) && w.count >= l.max {
			return w.reset.Sub(now), false
		}
		if w == nil && len(t.keys) >= t.maxKeys {
			t.sweep(now)
			if len(t.keys) >= t.maxKeys {
				return t.window, false
			}
		}
	}
	return 0, true
}

// count adds one to k's window. Called with mu held.
func (t *throttle) count(now time.Time, k string) {
	w := t.keys[k]
	if w == nil || !now.Before(w.reset) {
		if w == nil && len(t.keys) >= t.maxKeys {
			return // under refuses new keys meanwhile
		}
		w = &window{reset: now.Add(t.window)}
		t.keys[k] = w
	}
	w.count++
}

func (t *throttle) sweep(now time.Time) {
	for k, w := range t.keys {
		if !now.Before(w.reset) {
			delete(t.keys, k)
		}
	}
}

// addrKeys are the throttle keys of a client address: the address, and
// its network (/24 or /64). Something that is not an address is its own
// key for both.
func addrKeys(addr string) (string, string) {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "addr:" + addr, "net:" + addr
	}
	a = a.Unmap()
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits) // bits fits either family
	return "addr:" + a.String(), "net:" + p.String()
}
