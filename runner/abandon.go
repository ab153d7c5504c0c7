package runner

import (
	"context"
	"time"
)

// abandonAfter is how long a run whose context has ended (run_timeout, a
// native cancel, shutdown, its owner finishing) waits for its agent to
// return before it gives up on it. A well-behaved agent returns within
// microseconds of its context ending, with what it had so far (usage,
// attempts); one that ignores its context (a validation pinned by a
// hostile schema, a provider library that does not honour ctx) must not
// keep the run unrecorded, its in-flight slot held and its cancel hanging.
const abandonAfter = 250 * time.Millisecond

// watchAbandon arranges for the run to stop waiting for its agent
// abandonAfter once its context ends, through the run's one watch of its
// context (interrupt.go). The agent's goroutine calls returned when the
// agent is back.
func (h *Handle) watchAbandon() {
	h.interruptMu.Lock()
	h.armLocked()
	h.interruptMu.Unlock()
}

// returned notes that the agent is back: once the owner has stopped the
// OnInterrupt calls too, the run's watch is stopped.
func (h *Handle) returned() {
	h.interruptMu.Lock()
	h.agentReturned = true
	if h.interruptsDone && h.watchStop != nil {
		h.watchStop()
	}
	h.interruptMu.Unlock()
}

// awaitAgent waits abandonAfter for the agent once the run's context has
// ended, then abandons it.
func (h *Handle) awaitAgent() {
	select {
	case <-h.done:
		return
	default:
	}
	t := time.NewTimer(abandonAfter)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
		h.abandon()
	}
}

// abandon ends the agent's side of the run without the agent: the result
// is the context's cause, Events and Wait return, and what the agent does
// later is dropped (end refuses it, emit sends nothing).
func (h *Handle) abandon() {
	h.endMu.Lock()
	defer h.endMu.Unlock()
	if h.agentEnded {
		return
	}
	h.agentEnded = true
	h.res, h.err = Result{}, context.Cause(h.ctx)
	close(h.events)
	close(h.done)
	h.svc.log.Warn("runner: agent ignored the end of its run; run recorded without waiting for it",
		"run_id", h.run.ID, "cause", h.err)
}

// end records the agent's result and closes Events and done, unless the
// run was abandoned first.
func (h *Handle) end(res Result, err error) {
	h.endMu.Lock()
	defer h.endMu.Unlock()
	if h.agentEnded {
		return
	}
	h.agentEnded = true
	h.res, h.err = res, err
	close(h.events)
	close(h.done)
}
