package runner

import (
	"context"
	"errors"
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
// per request (TestFinishStartsNoGoroutine).
func (h *Handle) OnInterrupt(f func()) (stop func() bool) {
	stop = context.AfterFunc(h.ctx, func() {
		if !errors.Is(context.Cause(h.ctx), errFinished) {
			f()
		}
	})
	h.interruptMu.Lock()
	if h.interrupt == nil { // the run stage's one watch: no slice to allocate
		h.interrupt = stop
	} else {
		h.interrupts = append(h.interrupts, stop)
	}
	h.interruptMu.Unlock()
	return stop
}

// stopInterrupts cancels the OnInterrupt calls not made yet.
func (h *Handle) stopInterrupts() {
	h.interruptMu.Lock()
	first, more := h.interrupt, h.interrupts
	h.interrupt, h.interrupts = nil, nil
	h.interruptMu.Unlock()
	if first != nil {
		first()
	}
	for _, stop := range more {
		stop()
	}
}
