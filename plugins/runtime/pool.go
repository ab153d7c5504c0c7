package runtime

import (
	"context"
	"sync"
)

// pool bounds and recycles the instances of one plugin. An instance serves
// one call at a time, so at most size calls run at once; further callers wait
// for a slot. Instances are made lazily, so an idle plugin costs one instance
// (the one Load checked), and the most recently returned instance is reused
// first, which keeps its memory warm. sync.Pool is no fit: it drops entries
// without closing them, and wasm instances hold megabytes until closed.
type pool struct {
	// slots holds one token per caller that owns, or is about to own, an
	// instance. Its capacity bounds the number of live instances.
	slots chan struct{}
	// create makes a new instance.
	create func(context.Context) (*instance, error)
	// drained runs once, when the pool is closed and its last instance is.
	drained func()

	mu     sync.Mutex
	idle   []*instance
	live   int // instances made or being made and not yet closed
	closed bool
}

func newPool(size int, create func(context.Context) (*instance, error), drained func()) *pool {
	return &pool{slots: make(chan struct{}, size), create: create, drained: drained}
}

// wait blocks until the caller may own an instance, or ctx is done. A nil
// return must be followed by take.
func (p *pool) wait(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take returns an idle instance or makes one. It must follow a successful
// wait; on error the slot is given back. It fails with ErrClosed once the pool
// is closed.
func (p *pool) take(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	p.live++
	p.mu.Unlock()
	inst, err := p.create(ctx)
	if err != nil {
		p.forget()
		return nil, err
	}
	return inst, nil
}

// put gives a healthy instance back after a call, or closes it if the pool
// was closed meanwhile.
func (p *pool) put(ctx context.Context, inst *instance) {
	p.mu.Lock()
	if !p.closed {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		<-p.slots
		return
	}
	p.mu.Unlock()
	p.discard(ctx, inst)
}

// discard closes an instance instead of returning it, after it faulted or
// once the pool is closed.
func (p *pool) discard(ctx context.Context, inst *instance) {
	inst.close(ctx)
	p.forget()
}

// forget accounts for an instance that is gone and frees its slot.
func (p *pool) forget() {
	p.mu.Lock()
	p.live--
	last := p.closed && p.live == 0
	p.mu.Unlock()
	<-p.slots
	if last {
		p.drained()
	}
}

// close closes the idle instances now; instances in use are closed when they
// come back. Later takes fail with ErrClosed.
func (p *pool) close(ctx context.Context) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	last := p.live == 0
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close(ctx)
	}
	if last {
		p.drained()
	}
}

// stats returns the number of live and idle instances.
func (p *pool) stats() (live, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live, len(p.idle)
}
