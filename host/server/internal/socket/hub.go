package socket

import (
	"context"
	"strconv"
	"sync"

	"github.com/runedge/runedge/filters/apierr"
)

// Hub tracks a host's open sockets, which http.Server.Shutdown does not
// (they are hijacked): at shutdown it tells each to end after its turn in
// flight and waits for them within the grace period. It also counts them
// per tenant and per token, for the caps (Enter).
type Hub struct {
	mu       sync.Mutex
	conns    map[*Conn]struct{}
	draining bool
	wg       sync.WaitGroup
	// open counts the sockets entered and not yet left: in all, per
	// tenant and per token (a slot is taken before the upgrade).
	open    int
	tenants map[string]int
	tokens  map[string]int
	// descriptors is the sockets' share of the process's descriptors
	// (DescriptorShare), read when the hub is made; 0: no bound.
	descriptors int
}

// NewHub returns an empty hub, its descriptor share read from the
// process's limit now.
func NewHub() *Hub {
	return &Hub{conns: map[*Conn]struct{}{}, tenants: map[string]int{}, tokens: map[string]int{},
		descriptors: DescriptorShare(descriptorLimit())}
}

// DescriptorShare is how many descriptors sockets may hold under a
// process limit of limit (0: unknown, no bound): half of it. Each socket
// holds one for its life; the other half is for what must keep answering
// when sockets are at their cap: the listeners, ordinary requests and
// /healthz, the admin listener, the store, the upstream connections of the
// runs in flight.
func DescriptorShare(limit int) int { return limit / 2 }

// Caps bound the open sockets of a host, of one tenant and of one token
// (0: no bound).
type Caps struct {
	Host, Tenant, Token int
}

// retryAfter is the Retry-After of a socket refused at a cap, in seconds:
// a slot frees when another socket closes, which the host cannot foresee.
const retryAfter = 5

// Enter takes a slot for a socket of tenant and token, or refuses it: 503
// at the host's cap, 429 at the tenant's or the token's, both with
// Retry-After. leave gives the slot back, once.
func (h *Hub) Enter(tenant, token string, caps Caps) (leave func(), e *apierr.Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.descriptors > 0 && (caps.Host <= 0 || h.descriptors < caps.Host) {
		caps.Host = h.descriptors
	}
	switch {
	case caps.Host > 0 && h.open >= caps.Host:
		return nil, apierr.Unavailable("this host has "+strconv.Itoa(h.open)+" WebSockets open, its limit; retry later or on another host", retryAfter, nil)
	case caps.Tenant > 0 && h.tenants[tenant] >= caps.Tenant:
		return nil, socketLimit("the tenant has " + strconv.Itoa(h.tenants[tenant]) + " WebSockets open, its limit (websocket.max_sockets_per_tenant); close one first")
	case caps.Token > 0 && h.tokens[token] >= caps.Token:
		return nil, socketLimit("the token has " + strconv.Itoa(h.tokens[token]) + " WebSockets open, its limit (websocket.max_sockets_per_token); close one first")
	}
	h.open++
	h.tenants[tenant]++
	h.tokens[token]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.open--
			if h.tenants[tenant]--; h.tenants[tenant] <= 0 {
				delete(h.tenants, tenant)
			}
			if h.tokens[token]--; h.tokens[token] <= 0 {
				delete(h.tokens, token)
			}
		})
	}, nil
}

// socketLimit is the 429 of a socket over its tenant's or token's cap.
func socketLimit(msg string) *apierr.Error {
	e := apierr.New(apierr.CodeRateLimited, msg)
	e.RetryAfter = retryAfter
	return e
}

// Serve runs k until it ends, tracked; false when the hub is draining (the
// caller closes k).
func (h *Hub) Serve(ctx context.Context, k *Conn) bool {
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		return false
	}
	h.conns[k] = struct{}{}
	h.wg.Add(1)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.conns, k)
		h.mu.Unlock()
		h.wg.Done()
	}()
	k.Serve(ctx)
	return true
}

// Drain tells every socket to close (going away) after its turn in
// flight; sockets opened later are refused.
func (h *Hub) Drain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining = true
	for k := range h.conns {
		k.drainNow()
	}
}

// Wait waits until every socket has closed, or ctx ends.
func (h *Hub) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open is the number of open sockets.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Draining reports whether Drain was called.
func (h *Hub) Draining() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.draining
}
