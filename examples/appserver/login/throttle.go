package login

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Throttle limits what logins can cost and how fast passwords can be
// guessed. Each login attempt runs PBKDF2 with 600,000 iterations, a
// deliberate fraction of a second of CPU; without limits anyone could keep
// every core busy and try passwords as fast as the machine hashes them. So:
//
//   - per client IP, at most PerIP attempts per Window, right or wrong (each
//     costs a hash);
//   - per user name, at most PerUser failed attempts per Window; then that
//     name is refused until the window ends, whatever the password, so
//     guessing one account from many addresses is as slow as from one;
//   - at most MaxHashes hashes at once; an attempt that finds none free
//     within HashWait is refused rather than queued, so a flood cannot
//     build a backlog of work.
//
// Refusals are 429 with Retry-After. The counters are fixed windows in maps
// of at most MaxKeys entries each; expired entries are swept as keys are
// added, and when a map is full of live entries new keys are refused, which
// under a flood of addresses fails closed.
type Throttle struct {
	PerIP, PerUser int
	Window         time.Duration
	MaxHashes      int
	HashWait       time.Duration
	MaxKeys        int

	once   sync.Once
	hashes chan struct{}
	mu     sync.Mutex
	ips    map[string]*window
	users  map[string]*window
	now    func() time.Time
}

// defaultThrottle serves the Auths that set no Throttle.
var defaultThrottle = NewThrottle()

// SecureByDefault reports whether the session cookie should be Secure for
// an app server listening on addr over plain HTTP: yes, unless addr is a
// loopback address, where a browser on the same machine talks to it
// without TLS. Anywhere else, plain HTTP is only the hop behind a TLS
// terminator, and a cookie without Secure would also be sent over any plain
// HTTP request the browser makes to the host, where anyone on the path can
// read it.
func SecureByDefault(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// window counts events until reset.
type window struct {
	count int
	reset time.Time
}

// NewThrottle returns a Throttle with the defaults: 20 attempts per IP and
// 5 failures per user per 15 minutes, as many hashes at once as there are
// CPUs (at least 2), waiting at most 2 s for one, 100,000 keys per map.
func NewThrottle() *Throttle {
	return &Throttle{PerIP: 20, PerUser: 5, Window: 15 * time.Minute,
		MaxHashes: max(2, runtime.GOMAXPROCS(0)), HashWait: 2 * time.Second, MaxKeys: 100_000}
}

func (t *Throttle) init() {
	t.once.Do(func() {
		t.hashes = make(chan struct{}, max(1, t.MaxHashes))
		t.ips, t.users = make(map[string]*window), make(map[string]*window)
		if t.now == nil {
			t.now = time.Now
		}
	})
}

// refusal is why an attempt was refused, and for how long.
type refusal struct {
	message    string
	retryAfter time.Duration
}

// admit counts an attempt from ip for user and reports whether it may go
// on to hash a password.
func (t *Throttle) admit(ip, user string) *refusal {
	t.init()
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if w := t.live(t.users, user, now); w != nil && w.count >= t.PerUser {
		return &refusal{"Too many failed logins for this user; try again later.", w.reset.Sub(now)}
	}
	w := t.live(t.ips, ip, now)
	if w == nil {
		if w = t.add(t.ips, ip, now); w == nil {
			return &refusal{"Too many logins right now; try again later.", t.Window}
		}
	}
	if w.count >= t.PerIP {
		return &refusal{"Too many login attempts from your address; try again later.", w.reset.Sub(now)}
	}
	w.count++
	return nil
}

// failed counts a wrong password for user.
func (t *Throttle) failed(user string) {
	t.init()
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.live(t.users, user, now)
	if w == nil {
		if w = t.add(t.users, user, now); w == nil {
			return // full: admit refuses new keys meanwhile
		}
	}
	w.count++
}

// live returns key's window if it has not ended.
func (t *Throttle) live(m map[string]*window, key string, now time.Time) *window {
	w := m[key]
	if w == nil || !now.Before(w.reset) {
		return nil
	}
	return w
}

// add starts a window for key, sweeping ended ones first when the map is
// full; nil when it is full of live ones.
func (t *Throttle) add(m map[string]*window, key string, now time.Time) *window {
	if len(m) >= t.MaxKeys {
		for k, w := range m {
			if !now.Before(w.reset) {
				delete(m, k)
			}
		}
		if len(m) >= t.MaxKeys {
			return nil
		}
	}
	w := &window{reset: now.Add(t.Window)}
	m[key] = w
	return w
}

// hash runs check holding one of the MaxHashes slots, or reports that none
// came free within HashWait.
func (t *Throttle) hash(ctx context.Context, check func()) bool {
	t.init()
	timer := time.NewTimer(t.HashWait)
	defer timer.Stop()
	select {
	case t.hashes <- struct{}{}:
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
	defer func() { <-t.hashes }()
	check()
	return true
}

// clientIP is the address the request came from: the peer, not a
// forwarding header, which the client could write.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// writeRefusal answers 429 with Retry-After in whole seconds.
func writeRefusal(w http.ResponseWriter, r *refusal) {
	secs := int((r.retryAfter + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	WriteError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", r.message)
}
