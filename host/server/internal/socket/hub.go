package socket

import (
	"context"
	"sync"
)

// Hub tracks a host's open sockets, which http.Server.Shutdown does not
// (they are hijacked): at shutdown it tells each to end after its turn in
// flight and waits for them within the grace period.
type Hub struct {
	mu       sync.Mutex
	conns    map[*Conn]struct{}
	draining bool
	wg       sync.WaitGroup
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{conns: map[*Conn]struct{}{}} }

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
