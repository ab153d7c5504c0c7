package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// errFinished cancels a run's context once its outcome is recorded, to
// release an agent the owner stopped waiting for.
var errFinished = errors.New("run finished")

// Handle is one run in flight. The goroutine that called Start owns it:
// it reads Events (streaming), calls Wait, and must call Finish.
type Handle struct {
	svc    *Service
	run    Run
	stream bool
	// stored: the run is a stored response (history kept); object is the
	// final Response object its owner set before Finish.
	stored, noStore, background bool
	// logged: a native run (POST /runner/v1/runs) keeps its events
	// (EventLog) though it is no stored response.
	logged bool
	object []byte
	// input is what the agent was given (history, then the request's
	// input, references resolved): compaction lists its user messages.
	input []Message
	// deleted: the response was deleted while it ran (DeleteResponse);
	// its outcome is recorded without output.
	deleted atomic.Bool
	token   string // StartSpec.Token, for the per-token bound and the ledger

	// meterAt is the metering the run was admitted under; settle gives its
	// budgets what the run used (quota.go), quota is what they had left.
	meterAt *Metering
	settle  func(ctx context.Context, tokens, costNanos int64)
	quota   QuotaStatus

	// lease is the fencing token of the run's lease (0: none); leaseLost
	// is set once another acquisition holds it (or the host handed it
	// off, handedOff): from then on the run writes nothing. redriven: a
	// run taken over and driven again (leasing.go).
	lease     int64
	leaseLost atomic.Bool
	handedOff atomic.Bool
	redriven  bool
	// leased is set once the run's row (and so its lease) is committed,
	// ending once its owner has begun the terminal write: a renewal
	// names only runs between the two, since it would find the others'
	// leases missing or ended and report them lost.
	leased, ending atomic.Bool

	parent    context.Context // the request's context, for the terminal write
	ctx       context.Context // the run's context: parent + cancel cause + deadline
	cancel    context.CancelCauseFunc
	stopTimer context.CancelFunc

	// begun is when the run was admitted (monotonic); firstToken is the
	// offset of the agent's first text delta from it, in nanoseconds (0:
	// none yet). The agent goroutine writes it, Finish reads it.
	begun      time.Time
	firstToken atomic.Int64

	// pending, when set, is the agent's run not started yet: an inline
	// run (InlineAgent), which the first of Events, Wait and Finish runs
	// on its caller's goroutine (inline).
	pending     func()
	pendingOnce sync.Once

	events chan Event
	done   chan struct{} // closed when the agent has returned or was abandoned
	res    Result        // set before done is closed
	err    error
	// endMu guards the end of the agent's side (abandon.go): whichever of
	// the agent and the abandon watch comes first sets res/err and closes
	// events and done; emit holds it shared so no send hits a closed events.
	endMu      sync.RWMutex
	agentEnded bool

	// interrupts are the OnInterrupt calls, stopped by finish before it
	// ends the run's context (interruptsDone: none is added after).
	// watchStop stops the run's one watch of its context, for them and
	// for the abandon watch (interrupt.go, abandon.go); agentReturned:
	// the agent is back, the abandon watch has nothing left to do.
	interruptMu    sync.Mutex
	interrupt      interruptWatch // the first, in place
	interrupts     []*interruptWatch
	interruptsDone bool
	agentReturned  bool
	watchStop      func() bool

	once     sync.Once
	outcome  error         // what Finish returns
	finished chan struct{} // closed when the outcome is recorded
}

func newHandle(parent context.Context, s *Service, run Run, stream bool) *Handle {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.CancelFunc(func() {})
	if s.timeout > 0 {
		ctx, stop = context.WithTimeoutCause(ctx, s.timeout, s.timedOut)
	}
	// Only a streaming run sends on events (emit); any other only closes
	// it, so its channel needs no buffer: half a kilobyte less per request.
	buf := 0
	if stream {
		buf = 16
	}
	return &Handle{
		svc: s, run: run, stream: stream, begun: time.Now(),
		parent: parent, ctx: ctx, cancel: cancel, stopTimer: stop,
		events:   make(chan Event, buf),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
}

// discard releases the contexts of a handle whose run never started.
func (h *Handle) discard() {
	h.cancel(errFinished)
	h.stopTimer()
}

// Run returns the run record as created (ids, times, status running).
func (h *Handle) Run() Run { return h.run }

// Record is the run record Run copies, read in place (about 450 bytes a
// copy): the caller must not modify it. It does not change once Start has
// returned.
func (h *Handle) Record() *Run { return &h.run }

// Input returns the agent's input: the earlier turns of a continued
// response, then the request's own input, references resolved. The
// caller must not modify it.
func (h *Handle) Input() []Message { return h.input }

// Stored reports whether the run is a stored response: its items and
// final object are kept, and its stream events may be (Service.History).
func (h *Handle) Stored() bool { return h.stored }

// Background reports whether the run outlives its request.
func (h *Handle) Background() bool { return h.background }

// SetObject sets the final Response object that Finish records with a
// stored response. Call it before Finish.
func (h *Handle) SetObject(obj []byte) { h.object = obj }

// Object is the final Response object SetObject set (nil: none), as the
// client got it: what a conversation remembers of the turn.
func (h *Handle) Object() []byte { return h.object }

// Cancelled returns a channel closed when the run's context ends
// (cancel, shutdown, timeout, or the run finished).
func (h *Handle) Cancelled() <-chan struct{} { return h.ctx.Done() }

// Events streams the agent's deltas when the request asked to stream. The
// channel is closed when the agent has returned, streaming or not, so a
// consumer can always range over it and then call Wait. An inline run
// runs here, and its channel is closed when Events returns.
func (h *Handle) Events() <-chan Event {
	h.inline()
	return h.events
}

// Wait blocks until the agent has returned and gives its result.
func (h *Handle) Wait() (Result, error) {
	h.inline()
	<-h.done
	return h.res, h.err
}

// inline runs a pending inline run's agent on the caller's goroutine,
// once; a caller that comes while it runs waits for it.
func (h *Handle) inline() {
	if h.pending != nil {
		h.pendingOnce.Do(h.pending)
	}
}

func (h *Handle) execute(agent Agent, req Request) {
	h.watchAbandon()
	var res Result
	var err error
	defer func() {
		if p := recover(); p != nil {
			h.svc.log.Error("runner: agent panicked", "run_id", h.run.ID, "panic", p, "stack", string(debug.Stack()))
			res, err = Result{}, fmt.Errorf("agent panicked: %v", p)
		}
		h.returned()
		h.end(res, err)
	}()
	res, err = agent.Run(h.ctx, req, h.emit)
}

// emit hands one delta to the consumer. It never blocks past the end of the
// run: a consumer that stopped reading (client gone, owner finished) is
// released by the run's context.
func (h *Handle) emit(ev Event) error {
	if (ev.Delta != "" || ev.ToolCall != nil) && h.firstToken.Load() == 0 {
		h.firstToken.Store(max(int64(time.Since(h.begun)), 1))
	}
	if h.ctx.Err() != nil {
		return context.Cause(h.ctx)
	}
	if !h.stream {
		return nil
	}
	h.endMu.RLock()
	defer h.endMu.RUnlock()
	if h.agentEnded { // abandoned: events is closed
		return context.Cause(h.ctx)
	}
	// Room in the buffer (most events of a stream): a plain send, not the
	// two-case select, which locks both channels.
	select {
	case h.events <- ev:
		return nil
	default:
	}
	select {
	case h.events <- ev:
		return nil
	case <-h.ctx.Done():
		return context.Cause(h.ctx)
	}
}

// Finish records the run's outcome from the agent's result and error (or
// the owner's, when a later stage failed), exactly once: later calls write
// nothing and return the first call's error. It first stops the agent if it
// is still going and waits for it, so no goroutine outlives the run.
//
// The error wraps the sentinel the caller maps to HTTP (ErrCancelled,
// ErrTimeout, ErrWaiting, ErrProvider, ErrOutputInvalid) or is the original
// error; it is nil when the run completed. When the write itself fails it
// also wraps ErrNotRecorded (and the store's error, which is logged here
// with the run id). See outcome.go for the rules.
//
// In the HTTP path one place calls it: the run stage (filters/run), which
// hands later stages its own finishing function (filters.Exchange.Finish).
func (h *Handle) Finish(res *Result, err error) error {
	h.once.Do(func() { h.outcome = h.finish(res, err) })
	return h.outcome
}

func (h *Handle) finish(res *Result, err error) error {
	o := classify(h.ctx, res, err)
	// Stop the agent before the write, so that the record can say how many
	// provider calls it made: the cancelled context releases it at once.
	h.stopInterrupts()
	h.cancel(errFinished)
	h.stopTimer()
	h.inline() // an inline run nobody waited for: it sees its context ended
	<-h.done
	attempts := h.res.Attempts
	if res != nil {
		attempts = max(attempts, res.Attempts)
	}
	// The write must happen even when the client has gone: that is the
	// case it records.
	t := o.transition(h.svc.now().Unix(), attempts)
	if t.Usage == nil && o.status == StatusCancelled && h.res.Usage != (Usage{}) {
		// A cancelled run still cost what it consumed so far.
		u := h.res.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		t.Usage = &u
	}
	if h.noStore || h.deleted.Load() {
		t.Output = ""
	}
	elapsed, firstToken := time.Since(h.begun), time.Duration(h.firstToken.Load())
	if o.status.Terminal() {
		t.DurationMs = msPtr(elapsed)
		if firstToken > 0 {
			t.TimeToFirstTokenMs = msPtr(firstToken)
		}
	}
	wctx := context.WithoutCancel(h.parent)
	if h.leaseLost.Load() {
		// Another acquisition holds the run (or it was handed to the
		// fleet): its writes are that one's now.
		h.svc.release(h)
		close(h.finished)
		if h.handedOff.Load() {
			return fmt.Errorf("%w: the run was handed to another host", ErrShutdown)
		}
		return fmt.Errorf("%w: run %s: this host lost its lease; another host runs it", ErrUnavailable, h.run.ID)
	}
	t.Lease = h.lease
	h.ending.Store(true)
	// A stored response's final object and output item join the terminal
	// write when the store can (HistoryJoiner): one commit, both or neither.
	// The joined write is fenced by the same lease token: when another
	// host took the run over meanwhile, neither is kept.
	tctx, ended := wctx, NotJoined
	var out []Item
	if h.stored {
		if o.status == StatusCompleted {
			out = outputItems(h.run.ID, h.object, o.res, t.Output)
		}
		tctx, ended = h.svc.joinEnd(wctx, h.run.ID, h.lease, h.object, out)
	}
	if t.Usage != nil && o.status.Terminal() {
		t.Ledger = h.ledgerEntry(t.Usage, h.svc.now().Unix())
	}
	werr := h.svc.store.Transition(tctx, h.run.ID, t)
	if errors.Is(werr, ErrFenced) && h.svc.lease != nil {
		h.leaseLost.Store(true)
		h.svc.lease.obs.FencedWrite()
	}
	h.settleQuota(wctx, t.Ledger)
	if werr == nil && h.stored && !ended() {
		werr = h.svc.history.EndResponse(wctx, h.run.ID, h.object, out)
	}
	h.svc.release(h)
	close(h.finished)
	obs := h.ended(t, elapsed, firstToken)
	h.svc.observer.RunFinished(obs)
	*obs = Run{}
	endedRuns.Put(obs)
	// No Logger.With here: it formats its attributes at once (about 10 µs
	// per run with the text handler), even for a debug line that is off.
	var de *DetailError
	if errors.As(err, &de) && de.Detail != "" {
		// The words the client did not get: the operator finds them by the
		// run id the client quotes.
		h.svc.log.Warn("runner: run failed", "run_id", h.run.ID, "reason", o.reason, "err", de.Err, "detail", de.Detail)
	}
	if werr != nil {
		h.svc.log.Error("runner: cannot record run outcome",
			"run_id", h.run.ID, "status", o.status, "reason", o.reason, "err", werr)
		return errors.Join(o.err, fmt.Errorf("runner: %w: run %s: %w", ErrNotRecorded, h.run.ID, werr))
	}
	if h.svc.log.Enabled(wctx, slog.LevelDebug) {
		h.svc.log.Debug("runner: run finished", "run_id", h.run.ID, "status", o.status, "reason", o.reason)
	}
	return o.err
}

// endedRuns holds the records Finish hands the observer, which reads one
// during its call only (Observer): a Run (about 420 bytes) is not
// allocated per run for it.
var endedRuns = sync.Pool{New: func() any { return new(Run) }}

// ended is the run as its outcome recorded it, for the observer, in a
// record from endedRuns.
func (h *Handle) ended(t Transition, elapsed, firstToken time.Duration) *Run {
	r := endedRuns.Get().(*Run)
	*r = h.run
	r.Elapsed, r.FirstToken = elapsed, firstToken
	r.Status, r.StatusReason, r.EndedAt, r.Usage, r.Error = t.Status, t.Reason, t.EndedAt, t.Usage, t.Error
	r.Attempts = t.Attempts
	r.DurationMs, r.TimeToFirstTokenMs = t.DurationMs, t.TimeToFirstTokenMs
	r.Output = t.Output
	return r
}

// msPtr is d in whole milliseconds.
func msPtr(d time.Duration) *int64 {
	ms := d.Milliseconds()
	return &ms
}
