package server

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A stream's events that are at hand together leave in one socket write
// (filters.Reply holds its writes while more events follow at once,
// runner.Event.More). net/http cannot be told so: its connection buffer
// is 4 KiB, and a burst longer than that spilled to the socket mid-burst,
// a second write of the same burst. holdConn keeps what net/http writes
// while the reply holds and sends it with the write that ends the hold.
// Nothing waits on the network: a hold lasts only while the next event is
// already in memory, and a flush ends it.

// holdMax bounds what a connection holds: past it, a write goes out.
const holdMax = 64 << 10

// holdKeep is the largest held buffer a connection keeps between writes.
const holdKeep = 16 << 10

// holdListener wraps the API listener's plain connections in holdConns.
// A TLS connection is passed as it is: net/http must see a *tls.Conn.
type holdListener struct{ net.Listener }

func (l holdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if _, ok := c.(*tls.Conn); ok {
		return c, nil
	}
	hc := &holdConn{Conn: c}
	hc.wake.L = &hc.dl
	return hc, nil
}

// holdConn is a connection whose writes an HTTP/1 reply may hold. It is
// written by the goroutine serving the connection only (its handler, then
// net/http finishing the response), so its hold needs no lock.
//
// Its deadlines reach the socket when a read or write needs them, not
// when they are set. A small request moved the read deadline eight times
// and the write deadline twice, each a change to the runtime's timers
// under the socket's lock, though it read the socket once or twice: net/http
// sets one per state (the header's, the whole request's, none while the
// handler runs, the idle one), sets none before its background read and
// one in the past and back to stop it, and the body stage sets and clears
// its own around a body that net/http has mostly buffered with the
// headers. A deadline is a time, not a timer: given to the socket when a
// read or write starts, it fires when it would have. A deadline set while
// a read (write) is under way, as net/http's stop of its background read
// and the run stage's abort of a blocked write are, goes to the socket at
// once.
//
// net/http's background read, its one-byte read that watches for the
// client leaving while the handler runs, waits between readGrace and
// twice it before it reads the socket (awaitRead): a short handler, a
// small request's whose answer waits only on the group commit, stops it
// first with a deadline in the past, and it ends with a timeout and no
// system call, where it read EAGAIN, parked in the poller and was woken
// by that deadline. The cost: a client gone during a handler's first
// readGrace is noticed at most twice readGrace late (its run cancelled
// then if still running; one that ended meanwhile is recorded as it
// ended, as for a client that leaves just after the end; docs/api.md).
type holdConn struct {
	net.Conn
	held bool   // the reply holds: keep what is written
	buf  []byte // written while held, not yet sent

	dl     sync.Mutex // guards what follows: deadlines are set from other goroutines
	rd, wd deadline

	// A one-byte read waiting before it reads the socket (awaitRead):
	// waiting while it does, wait its number, lapsed when graceTick ends
	// it; wake (on dl) tells it of that, of a read deadline set and of
	// the connection closed (its L is dl, set by holdListener, the one
	// maker of holdConns). noLapse: a test's, whose wait only a deadline
	// or the close ends.
	waiting, lapsed, closed, noLapse bool
	wait                             uint64
	wake                             sync.Cond
}

// readGrace is how long at least net/http's background read waits, with
// no read deadline set, before it reads the socket (at most twice it: one
// timer serves every connection's waits, ending at each of its ticks
// those begun before the last). It is longer than a small request's
// handler (the group commit answers it within a few ms at 32 connections
// on a loaded machine) so that the handler's end stops it before it
// reads, and short beside what a client that leaves cancels (a model's
// answer takes seconds).
const readGrace = 5 * time.Millisecond

// graces holds the waits of one-byte reads under way, in two generations:
// a tick of its timer (every readGrace while there are any) lapses the
// older and makes the newer the older. A wait is not taken off when it
// ends otherwise (its connection's wait number tells), so that starting
// and ending one costs an append under one lock and no timer of its own.
var graces struct {
	sync.Mutex
	newer, older, spare []graceWait
	timer               *time.Timer
	armed               bool
}

// graceLapses counts the waits graceTick has lapsed: each is a one-byte
// read that then went to the socket, because its handler outlasted the
// grace (TestSmallRequestMovesFewDeadlines tells those from reads that
// did not wait).
var graceLapses atomic.Int64

type graceWait struct {
	c    *holdConn
	wait uint64
}

// addGrace enters c's wait number n; graceTick will lapse it.
func addGrace(c *holdConn, n uint64) {
	graces.Lock()
	graces.newer = append(graces.newer, graceWait{c, n})
	if !graces.armed {
		graces.armed = true
		if graces.timer == nil {
			graces.timer = time.AfterFunc(readGrace, graceTick)
		} else {
			graces.timer.Reset(readGrace)
		}
	}
	graces.Unlock()
}

// graceTick lapses the older generation's waits still under way and ages
// the newer; the timer stays armed while either holds a wait.
func graceTick() {
	graces.Lock()
	defer graces.Unlock()
	for i, w := range graces.older {
		c := w.c
		c.dl.Lock()
		if c.waiting && c.wait == w.wait && !c.noLapse {
			c.lapsed = true
			c.wake.Signal()
			graceLapses.Add(1)
		}
		c.dl.Unlock()
		graces.older[i] = graceWait{}
	}
	graces.older, graces.newer, graces.spare = graces.newer, graces.spare[:0], graces.older[:0]
	if len(graces.older) == 0 {
		graces.armed = false
		return
	}
	graces.timer.Reset(readGrace)
}

// processStart is before any deadline in the past a read is stopped with
// (net/http's is 1970's): one before it is past without a clock read.
var processStart = time.Now()

// deadline is one direction's deadline: the one asked for, the one the
// socket has, and how many reads (writes) are under way.
type deadline struct {
	want, set time.Time
	busy      int
}

// SetReadDeadline implements net.Conn: the deadline reaches the socket
// with the next read, or now when one is under way.
func (c *holdConn) SetReadDeadline(t time.Time) error { return c.setDeadline(&c.rd, t) }

// SetWriteDeadline implements net.Conn, as SetReadDeadline does for writes.
func (c *holdConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(&c.wd, t) }

// SetDeadline implements net.Conn: both deadlines.
func (c *holdConn) SetDeadline(t time.Time) error {
	err := c.SetReadDeadline(t)
	if werr := c.SetWriteDeadline(t); err == nil {
		err = werr
	}
	return err
}

func (c *holdConn) setDeadline(d *deadline, t time.Time) error {
	c.dl.Lock()
	defer c.dl.Unlock()
	d.want = t
	if d == &c.rd && c.waiting {
		c.wake.Signal()
	}
	if d.busy == 0 {
		return nil
	}
	return c.applyLocked(d)
}

// applyLocked gives d's deadline to the socket if it has another.
func (c *holdConn) applyLocked(d *deadline) error {
	if d.want.Equal(d.set) {
		return nil
	}
	var err error
	if d == &c.rd {
		err = c.Conn.SetReadDeadline(d.want)
	} else {
		err = c.Conn.SetWriteDeadline(d.want)
	}
	if err == nil {
		d.set = d.want
	}
	return err
}

// begin counts a read (write) under way on d and gives its deadline to
// the socket; end ends it.
func (c *holdConn) begin(d *deadline) error {
	c.dl.Lock()
	defer c.dl.Unlock()
	d.busy++
	return c.applyLocked(d)
}

func (c *holdConn) end(d *deadline) {
	c.dl.Lock()
	d.busy--
	c.dl.Unlock()
}

// Read implements net.Conn. A one-byte read (net/http's background read;
// its reads of a request are of its 4 KiB buffer) waits first (awaitRead).
func (c *holdConn) Read(p []byte) (int, error) {
	if len(p) == 1 {
		if err := c.awaitRead(); err != nil {
			return 0, err
		}
	}
	if err := c.begin(&c.rd); err != nil {
		c.end(&c.rd)
		return 0, err
	}
	n, err := c.Conn.Read(p)
	c.end(&c.rd)
	return n, err
}

// awaitRead waits before a one-byte read with no read deadline, without
// touching the socket, until the first of: a read deadline set that is not
// after now (net/http's abortPendingRead sets one long past), which ends
// the read with os.ErrDeadlineExceeded as the socket would have; the wait
// lapsed (graceTick), a future read deadline set or the connection closed,
// after which the read goes to the socket as any other (which applies the
// deadline). A read with a deadline at its start is not net/http's
// background read (net/http clears the deadline before it) and does not
// wait. The clock is read only for a deadline set meanwhile that is not
// before the process's start.
func (c *holdConn) awaitRead() error {
	c.dl.Lock()
	if c.closed {
		c.dl.Unlock()
		return nil
	}
	if w := c.rd.want; !w.IsZero() {
		c.dl.Unlock()
		if past(w) { // net/http stopped it before it began: a bare handler's
			return os.ErrDeadlineExceeded
		}
		return nil // the socket's read applies the deadline
	}
	c.wait++
	n := c.wait
	c.waiting, c.lapsed = true, false
	c.dl.Unlock()
	addGrace(c, n)
	c.dl.Lock()
	defer c.dl.Unlock()
	for !c.lapsed && !c.closed && c.rd.want.IsZero() {
		c.wake.Wait()
	}
	c.waiting = false
	if w := c.rd.want; !w.IsZero() && past(w) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// past tells whether a deadline has passed, without a clock read for one
// before the process's start (net/http's).
func past(t time.Time) bool { return t.Before(processStart) || !t.After(time.Now()) }

// Close implements net.Conn; a one-byte read waiting goes to the socket,
// which tells it the connection is closed.
func (c *holdConn) Close() error {
	c.dl.Lock()
	c.closed = true
	if c.waiting {
		c.wake.Signal()
	}
	c.dl.Unlock()
	return c.Conn.Close()
}

// write writes p to the socket under its write deadline.
func (c *holdConn) write(p []byte) (int, error) {
	if err := c.begin(&c.wd); err != nil {
		c.end(&c.wd)
		return 0, err
	}
	n, err := c.Conn.Write(p)
	c.end(&c.wd)
	return n, err
}

type holdKey struct{}

// holdContext gives a request on c its connection (http.Server.ConnContext).
func holdContext(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*holdConn); ok {
		return context.WithValue(ctx, holdKey{}, hc)
	}
	return ctx
}

// Hold keeps the writes from now on (filters.Holder).
func (c *holdConn) Hold() { c.held = true }

// Release ends the hold and sends what it kept, in one write.
func (c *holdConn) Release() error {
	c.held = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.send(nil)
	return err
}

// releaseNext ends the hold when the handler has returned: what is kept
// goes out with net/http's next write, the end of the response (a
// streamed response always ends with one: the chunked body's last chunk),
// one write instead of two.
func (c *holdConn) releaseNext() { c.held = false }

func (c *holdConn) Write(p []byte) (int, error) {
	if c.held && len(c.buf)+len(p) <= holdMax {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if len(c.buf) == 0 {
		return c.write(p)
	}
	return c.send(p)
}

// send writes what is kept followed by p, in one write.
func (c *holdConn) send(p []byte) (int, error) {
	b := append(c.buf, p...)
	_, err := c.write(b)
	if cap(b) > holdKeep {
		c.buf = nil
	} else {
		c.buf = b[:0]
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite sends what is kept, then half-closes the connection as
// net/http does before it closes one whose request it did not read to the
// end (so that the client gets the reply, not a reset).
func (c *holdConn) CloseWrite() error {
	if len(c.buf) > 0 {
		c.held = false
		if _, err := c.send(nil); err != nil {
			return err
		}
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
