package runner

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrTenantBusy: the tenant has limits.max_in_flight_per_tenant runs in
// flight; Start refuses another until one ends.
var ErrTenantBusy = errors.New("tenant at its limit of runs in flight")

// ErrTokenBusy: the token has limits.max_in_flight_per_token runs in
// flight, over whatever tenants it named; Start refuses another until one
// ends.
var ErrTokenBusy = errors.New("token at its limit of runs in flight")

// ErrBackgroundBusy: limits.max_background background runs are in flight
// on this host; Start refuses another background run until one ends.
var ErrBackgroundBusy = errors.New("at the limit of background runs in flight")

// ReasonClientStalled: the client stopped reading and a write to it hit
// its deadline (limits.write_timeout); see ErrClientStalled.
const ReasonClientStalled = "client_stalled"

// OnInterrupt calls f (once, on its own goroutine) when the run is
// interrupted before its owner finished it: run_timeout, shutdown, a native
// cancel, the client's context. The owner uses it to unblock a write to a
// client that stopped reading, so that no deadline waits for the write.
// stop cancels the call; it is not made after Finish either.
//
// Finish stops the call before it ends the run's context: a watch that
// saw the run end would start a goroutine only to find errFinished, one
// per request (TestFinishStartsNoGoroutine). The calls share the run's one
// watch of its context with the abandon watch (watch): a context.AfterFunc
// each would be a child of the run's context, an allocation and a
// registration more per request.
func (h *Handle) OnInterrupt(f func()) (stop func() bool) {
	h.interruptMu.Lock()
	if h.interruptsDone {
		h.interruptMu.Unlock()
		return func() bool { return false }
	}
	w := &h.interrupt // the run stage's one call: nothing to allocate
	if w.f != nil {
		w = &interruptWatch{}
		h.interrupts = append(h.interrupts, w)
	}
	w.f = f
	h.armLocked()
	h.interruptMu.Unlock()
	return w.stop
}

// interruptWatch is one OnInterrupt call: f, unless stopped first. f is
// set once, under interruptMu, before the watch can read it.
type interruptWatch struct {
	f    func()
	once atomic.Bool // set by whichever of the call and stop comes first
}

// stop cancels the call; it reports whether it did (as context.AfterFunc's
// stop does).
func (w *interruptWatch) stop() bool { return w.once.CompareAndSwap(false, true) }

// armLocked registers the run's one watch of its context, once. It holds
// interruptMu.
func (h *Handle) armLocked() {
	if h.watchStop == nil {
		h.watchStop = context.AfterFunc(h.ctx, h.watch)
	}
}

// watch is the run's watch, on a goroutine of its own once its context
// ends: it makes the OnInterrupt calls not stopped, unless the run ended
// by its owner's Finish, and gives up on an agent that does not return
// (abandon.go).
func (h *Handle) watch() {
	h.interruptMu.Lock()
	first, more := h.interrupt.f != nil, h.interrupts
	h.interrupts, h.interruptsDone = nil, true
	h.interruptMu.Unlock()
	if !errors.Is(context.Cause(h.ctx), errFinished) {
		if first && h.interrupt.stop() {
			go h.interrupt.f()
		}
		for _, w := range more {
			if w.stop() {
				go w.f()
			}
		}
	}
	h.awaitAgent()
}

// stopInterrupts cancels the OnInterrupt calls not made yet. With the
// agent returned, the run's watch has nothing left to do: it is stopped,
// so that the end of the run's context starts no goroutine.
func (h *Handle) stopInterrupts() {
	h.interruptMu.Lock()
	more := h.interrupts
	h.interrupts, h.interruptsDone = nil, true
	if h.agentReturned && h.watchStop != nil {
		h.watchStop()
	}
	h.interruptMu.Unlock()
	h.interrupt.stop()
	for _, w := range more {
		w.stop()
	}
}
