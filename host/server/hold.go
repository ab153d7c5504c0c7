package server

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"sync"
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
	return &holdConn{Conn: c, grace: readGrace}, nil
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
// client leaving while the handler runs, waits readGrace before it reads
// the socket (awaitRead): a short handler, a small request's whose answer
// waits only on the group commit, stops it first with a deadline in the
// past, and it ends with a timeout and no system call, where it read
// EAGAIN, parked in the poller and was woken by that deadline. The cost:
// a client gone during a handler's first readGrace is noticed at its end,
// not at once (its run cancelled then if still running; one that ended
// within it is recorded as it ended, as for a client that leaves just
// after the end; docs/api.md).
type holdConn struct {
	net.Conn
	held bool   // the reply holds: keep what is written
	buf  []byte // written while held, not yet sent

	dl     sync.Mutex // guards rd, wd, waiting, closed: deadlines are set from other goroutines
	rd, wd deadline

	// A one-byte read waiting before it reads the socket (awaitRead):
	// waiting while it does, for at most grace (readGrace; a test's own),
	// timer its timer and wake told of a read deadline set or the
	// connection closed meanwhile, both made with the connection's first
	// wait and kept for its next.
	waiting, closed bool
	grace           time.Duration
	timer           *time.Timer
	wake            chan struct{}
}

// readGrace is how long net/http's background read waits, with no read
// deadline set, before it reads the socket. It is longer than a small
// request's handler (the group commit answers it within a few ms at 32
// connections on a loaded machine) so that the handler's end stops it
// before it reads, and short beside what a client that leaves cancels
// (a model's answer takes seconds): a client that disconnects during a
// handler's first readGrace has its run cancelled at most readGrace late.
const readGrace = 10 * time.Millisecond

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
		c.wakeLocked()
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
	if len(p) == 1 && c.grace > 0 {
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
// touching the socket, until the first of: a read deadline that is not
// after now (net/http's abortPendingRead sets one long past), which ends
// the read with os.ErrDeadlineExceeded, as the socket would have; readGrace
// gone, or the connection closed, after which the read goes to the socket
// as any other. A future deadline set meanwhile waits on, at most until it
// passes; the socket's read then has it. A read with a future deadline at
// its start is not net/http's background read (net/http clears the
// deadline before it) and does not wait. The clock is read only here.
func (c *holdConn) awaitRead() error {
	c.dl.Lock()
	defer c.dl.Unlock()
	if c.closed {
		return nil
	}
	start := time.Now()
	if w := c.rd.want; !w.IsZero() {
		if w.After(start) {
			return nil
		}
		return os.ErrDeadlineExceeded
	}
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	select {
	case <-c.wake: // left by a wake after the last wait ended
	default:
	}
	due := start.Add(c.grace)
	now := start
	c.waiting = true
	defer func() { c.waiting = false }()
	for {
		until := due
		if w := c.rd.want; !w.IsZero() && w.Before(until) {
			until = w
		}
		c.dl.Unlock()
		if c.timer == nil {
			c.timer = time.NewTimer(until.Sub(now))
		} else {
			c.timer.Reset(until.Sub(now))
		}
		select {
		case <-c.wake:
		case <-c.timer.C:
		}
		c.timer.Stop()
		c.dl.Lock()
		if c.closed {
			return nil
		}
		w := c.rd.want
		if !w.IsZero() && !w.After(start) { // abortPendingRead's: no clock read
			return os.ErrDeadlineExceeded
		}
		now = time.Now()
		if !w.IsZero() && !w.After(now) {
			return os.ErrDeadlineExceeded
		}
		if !now.Before(due) {
			return nil
		}
	}
}

// wakeLocked tells a waiting one-byte read to look again.
func (c *holdConn) wakeLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Close implements net.Conn; a one-byte read waiting goes to the socket,
// which tells it the connection is closed.
func (c *holdConn) Close() error {
	c.dl.Lock()
	c.closed = true
	if c.waiting {
		c.wakeLocked()
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
