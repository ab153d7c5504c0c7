package body

import (
	"container/list"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/runedge/runedge/filters/apierr"
)

// Gate bounds the bytes of request bodies being processed at once on a
// host. A request's processing is where its body is copied: the mapping's
// output, the native request's texts, the recorded request, the upstream
// body (about five copies of an agent-sized history), so the bytes a host
// holds follow the bodies it processes at once, not its connections.
//
// A request takes its body's length from the gate before its body is read
// (filters/body: Body.Admitting) and gives it back once its upstream
// request has been written (runner.Sent), by when the request path holds
// no copy of its body but the upstream one, or when its chain returns.
// One that does not fit waits, first come first served; past the wait it
// is refused with a retryable 503. A body larger than the whole bound is
// processed alone. One Gate serves every configuration generation (a
// reload changes its bound, not its count of what is in flight).
type Gate struct {
	mu      sync.Mutex
	limit   int64
	wait    time.Duration
	used    int64
	waiters list.List // of *waiter, in arrival order

	// The admissions whose bodies are being read (Body.admitRead), oldest
	// first, each given back by the gate's one timer once it has been
	// read for readHold: a timer of its own per request (time.AfterFunc
	// and Stop, about 0.5 µs and two allocations) was most of what the
	// gate cost a small request.
	lmu                 sync.Mutex
	lapse               *time.Timer // armed while reading holds any
	lapseArmed          bool
	readFirst, readLast *held
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when admitted
}

// NewGate returns a gate of limit bytes whose requests wait at most wait.
func NewGate(limit int64, wait time.Duration) *Gate {
	g := &Gate{}
	g.Set(limit, wait)
	return g
}

// Set changes the bound and the wait (a reload); requests in flight keep
// what they took.
func (g *Gate) Set(limit int64, wait time.Duration) {
	g.mu.Lock()
	g.limit, g.wait = max(limit, 1), wait
	g.admit()
	g.mu.Unlock()
}

// InFlight is the number of body bytes being processed now.
func (g *Gate) InFlight() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
}

// Waiting is the number of requests waiting for room.
func (g *Gate) Waiting() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return int64(g.waiters.Len())
}

// held is bytes taken from a gate; release gives them back, once. While
// its body is read it is on the gate's reading list (startRead).
type held struct {
	once sync.Once
	g    *Gate
	n    int64

	due        time.Time // when the lapse gives it back
	prev, next *held
	reading    bool
}

// startRead puts h on the gate's reading list: readHold from now, unless
// endRead takes it off first, the gate's timer gives its bytes back (a
// client that trickles its body must not keep others waiting).
func (g *Gate) startRead(h *held, hold time.Duration) {
	g.lmu.Lock()
	h.due = time.Now().Add(hold) // under lmu: the list stays in due order
	h.reading, h.prev, h.next = true, g.readLast, nil
	if g.readLast != nil {
		g.readLast.next = h
	} else {
		g.readFirst = h
	}
	g.readLast = h
	if !g.lapseArmed {
		g.lapseArmed = true
		if g.lapse == nil {
			g.lapse = time.AfterFunc(hold, g.lapsed)
		} else {
			g.lapse.Reset(hold)
		}
	}
	g.lmu.Unlock()
}

// endRead takes h off the reading list; false: the lapse gave its bytes
// back already (or is giving them back), as a stopped timer that had
// fired reports.
func (g *Gate) endRead(h *held) bool {
	g.lmu.Lock()
	defer g.lmu.Unlock()
	if !h.reading {
		return false
	}
	g.unlinkLocked(h)
	return true
}

func (g *Gate) unlinkLocked(h *held) {
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		g.readFirst = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		g.readLast = h.prev
	}
	h.reading, h.prev, h.next = false, nil, nil
}

// lapsed is the gate's timer: it gives back the bytes of every read due
// by now and waits for the next one due, if any. The list is in the order
// of the reads' starts, so of their due times.
func (g *Gate) lapsed() {
	var due []*held
	g.lmu.Lock()
	now := time.Now()
	for h := g.readFirst; h != nil && !h.due.After(now); h = g.readFirst {
		g.unlinkLocked(h)
		due = append(due, h)
	}
	if g.readFirst != nil {
		g.lapse.Reset(g.readFirst.due.Sub(now))
	} else {
		g.lapseArmed = false
	}
	g.lmu.Unlock()
	for _, h := range due {
		h.release()
	}
}

func (h *held) release() {
	h.once.Do(func() {
		h.g.mu.Lock()
		h.g.used -= h.n
		h.g.admit()
		h.g.mu.Unlock()
	})
}

// take takes n bytes, waiting while they do not fit.
func (g *Gate) take(ctx context.Context, n int64) (*held, error) {
	g.mu.Lock()
	n = min(n, g.limit)
	if g.waiters.Len() == 0 && g.used+n <= g.limit {
		g.used += n
		g.mu.Unlock()
		return &held{g: g, n: n}, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := g.waiters.PushBack(w)
	wait, limit := g.wait, g.limit
	g.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return &held{g: g, n: n}, nil
	case <-t.C:
		err = apierr.Unavailable("this host is processing "+strconv.FormatInt(limit, 10)+" bytes of requests, its limit; retry later or on another host", 1, nil)
	case <-ctx.Done():
		err = apierr.Unavailable("the request ended while it waited for this host to process it", 1, ctx.Err())
	}
	g.mu.Lock()
	select {
	case <-w.ready: // admitted as the wait ended: give the bytes back
		g.used -= n
	default:
		g.waiters.Remove(e)
	}
	g.admit() // those behind it may fit now
	g.mu.Unlock()
	return nil, err
}

// admit lets in the waiters at the front that fit, in order; the first
// that does not fit stops the others, so a large body is not passed over
// for ever. Called with mu held.
func (g *Gate) admit() {
	for e := g.waiters.Front(); e != nil; e = g.waiters.Front() {
		w := e.Value.(*waiter)
		if g.used > 0 && g.used+min(w.n, g.limit) > g.limit {
			return
		}
		g.used += w.n
		g.waiters.Remove(e)
		close(w.ready)
	}
}
