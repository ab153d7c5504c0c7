package runner

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EventLog holds the stream events of one stored response while it runs:
// readers on this host follow it live (stream resumption, the native events
// API), and it persists them in batches to the HistoryStore so that they
// outlive the run and any host can replay them. The writer (the run's
// owner) pays one copy per event and one store write per batch.
//
// What it keeps is bounded (HistoryBounds.MaxStoredEvents): past the bound,
// delta events (response.output_text.delta, …arguments.delta) are counted
// but neither kept nor stored, so a resumed stream shows a gap in
// sequence_number and then the done events, which carry the whole text.
// A deleted response's log is dropped (Drop): nothing more is kept.
type EventLog struct {
	svc   *Service
	runID string
	max   int // events kept before deltas are dropped

	mu      sync.Mutex
	n       int           // events appended, kept or not: the next Seq
	events  []StoredEvent // kept events, in Seq order
	arena   []byte        // current chunk; event data is sliced from it, never moved
	flushed int           // events[:flushed] are in the store
	last    time.Time
	closed  bool
	wake    chan struct{} // closed on the next append or close; nil if nobody waits
	err     error         // the first store error; later batches are not written
	dropped bool          // the response was deleted: nothing more is kept
	// lost is the run's Handle.leaseLost: once set, nothing more is
	// written (another acquisition of the run writes its events).
	lost *atomic.Bool
	// lease is the run's lease token (Handle.lease): the store keeps a
	// batch only while the run's token is still this one (0: unfenced).
	lease int64
}

// Batching: a batch is written when it holds eventBatch events or its
// oldest unwritten event is eventFlushAfter old, whichever comes first, and
// at the end.
const (
	eventBatch      = 256
	eventFlushAfter = 200 * time.Millisecond
	arenaChunk      = 32 << 10
)

// EventLog returns the run's event log, creating it on first use, or nil
// when the run is neither a stored response nor a native run (nothing is
// kept of it).
func (h *Handle) EventLog() *EventLog {
	if !h.stored && !h.logged {
		return nil
	}
	s := h.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	// A log of an earlier acquisition of the run on this host (its lease
	// lost, the run taken back) is not this drive's.
	if l := s.logs[h.run.ID]; l != nil && l.lease == h.lease {
		return l
	}
	l := &EventLog{svc: s, runID: h.run.ID, last: s.now(), max: s.bounds.MaxStoredEvents, lost: &h.leaseLost, lease: h.lease}
	s.logs[h.run.ID] = l
	return l
}

// LiveEvents returns the event log of a run in flight on this host, or
// nil. Callers check the run's visibility first.
func (s *Service) LiveEvents(runID string) *EventLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs[runID]
}

// Append adds the next event (its sequence number is the count so far).
// data is copied. A due batch is written before Append returns.
func (l *EventLog) Append(ctx context.Context, name string, data []byte) {
	l.mu.Lock()
	seq := l.n
	l.n++
	if l.dropped || (len(l.events) >= l.max && strings.HasSuffix(name, ".delta")) {
		l.mu.Unlock()
		return
	}
	if len(l.arena)+len(data) > cap(l.arena) {
		l.arena = make([]byte, 0, max(arenaChunk, len(data)))
	}
	start := len(l.arena)
	l.arena = append(l.arena, data...)
	l.events = append(l.events, StoredEvent{Seq: seq, Name: name, Data: l.arena[start:len(l.arena):len(l.arena)]})
	l.notify()
	// The clock is read every 16th event, not on each: a batch waits at
	// most 16 events longer than eventFlushAfter.
	pending := len(l.events) - l.flushed
	due := pending >= eventBatch
	if !due && pending%16 == 0 {
		due = l.svc.now().Sub(l.last) >= eventFlushAfter
	}
	l.mu.Unlock()
	if due {
		l.flush(ctx)
	}
}

func (l *EventLog) notify() {
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// flush writes the events not yet in the store, as one batch (or, past
// MaxStoredEvents, one per run of consecutive sequence numbers: a stored
// batch numbers its events from its first). Only the writer calls it, so
// batches are written in order.
func (l *EventLog) flush(ctx context.Context) {
	for l.flushOne(ctx) {
	}
}

// flushOne writes the next batch of consecutive events and reports
// whether there may be more.
func (l *EventLog) flushOne(ctx context.Context) bool {
	l.mu.Lock()
	batch := l.events[l.flushed:len(l.events):len(l.events)]
	for i := 1; i < len(batch); i++ {
		if batch[i].Seq != batch[i-1].Seq+1 {
			batch = batch[:i:i]
			break
		}
	}
	if l.lost != nil && l.lost.Load() && !l.dropped {
		l.dropLocked()
	}
	failed := l.err != nil || l.dropped
	l.mu.Unlock()
	if len(batch) == 0 || failed {
		return false
	}
	err := l.svc.history.AppendEvents(context.WithoutCancel(ctx), l.runID, l.lease, batch)
	if errors.Is(err, ErrFenced) {
		// Another acquisition holds the run (this host stalled past its
		// lease): it writes the run's events now; this drive stops.
		l.svc.fencedEvents(l.runID, l.lease)
		l.Drop()
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if errors.Is(err, ErrNotFound) {
		// Deleted (on another host): the store refuses its events.
		l.dropLocked()
		return false
	}
	if err != nil {
		l.err = err
		l.svc.log.Error("runner: cannot persist stream events", "run_id", l.runID, "err", err)
		return false
	}
	l.flushed += len(batch)
	l.last = l.svc.now()
	return l.flushed < len(l.events)
}

// Close writes what is left, wakes the readers and forgets the log: from
// now on the store has every event. It returns the first store error.
func (l *EventLog) Close(ctx context.Context) error {
	l.flush(ctx)
	l.mu.Lock()
	l.closed = true
	l.notify()
	err := l.err
	l.mu.Unlock()
	l.svc.mu.Lock()
	if l.svc.logs[l.runID] == l {
		delete(l.svc.logs, l.runID)
	}
	l.svc.mu.Unlock()
	return err
}

// Since returns the events after sequence number after, whether the log is
// closed (no more will come), and a channel closed when there is more to
// read.
func (l *EventLog) Since(after int) (events []StoredEvent, closed bool, more <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.events), func(i int) bool { return l.events[i].Seq > after })
	if i < len(l.events) {
		events = l.events[i:len(l.events):len(l.events)]
	}
	if !l.closed && len(events) == 0 {
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		more = l.wake
	}
	return events, l.closed, more
}

// Len returns how many events were appended (kept or not): the next
// event's sequence number.
func (l *EventLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Drop ends the log of a deleted response: its events are let go, later
// appends are ignored and nothing more is written to the store; readers
// see the log closed.
func (l *EventLog) Drop() {
	l.mu.Lock()
	l.dropLocked()
	l.mu.Unlock()
}

func (l *EventLog) dropLocked() {
	l.dropped, l.closed = true, true
	l.events, l.arena, l.flushed = nil, nil, 0
	l.notify()
}
