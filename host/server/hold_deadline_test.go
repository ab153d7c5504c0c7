package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// connCounts counts what reaches a connection: its deadlines, its reads
// and, of those, its one-byte reads (net/http's background read).
type connCounts struct {
	read, write, reads, oneByte atomic.Int64
}

// deadlineConn counts the deadlines and reads that reach a connection.
type deadlineConn struct {
	net.Conn
	n *connCounts
}

func (c deadlineConn) SetReadDeadline(t time.Time) error {
	c.n.read.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c deadlineConn) SetWriteDeadline(t time.Time) error {
	c.n.write.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

func (c deadlineConn) SetDeadline(t time.Time) error {
	c.n.read.Add(1)
	c.n.write.Add(1)
	return c.Conn.SetDeadline(t)
}

func (c deadlineConn) Read(p []byte) (int, error) {
	c.n.reads.Add(1)
	if len(p) == 1 {
		c.n.oneByte.Add(1)
	}
	return c.Conn.Read(p)
}

type deadlineListener struct {
	net.Listener
	n *connCounts
}

func (l deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return deadlineConn{c, l.n}, nil
}

// TestSmallRequestMovesFewDeadlines: a small request's deadlines reach its
// socket only when a read or write needs them. net/http and the chain
// set them eight times for reading and twice for writing per request; of
// those, the ones set and replaced before any read or write are never
// given to the socket. And net/http's background read, which it starts
// once the handler has the body's end and stops when the handler is done,
// does not reach the socket: the handler, a run the offline provider
// answers at once, ends within readGrace (one read a request, the
// request's, where it was two).
func TestSmallRequestMovesFewDeadlines(t *testing.T) {
	var n connCounts
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := serveListener(t, cfg, testWriter{t}, func(ln net.Listener) net.Listener {
		return deadlineListener{ln, &n}
	})
	postOK(t, h, "/v1/chat/completions", chatBody) // open the connection
	const reqs = 20
	r0, w0, rd0, one0 := n.read.Load(), n.write.Load(), n.reads.Load(), n.oneByte.Load()
	lapsed0 := graceLapses.Load()
	for range reqs {
		postOK(t, h, "/v1/chat/completions", chatBody)
	}
	per := func(v, v0 int64) float64 { return float64(v-v0) / reqs }
	r, w := per(n.read.Load(), r0), per(n.write.Load(), w0)
	rd, one := per(n.reads.Load(), rd0), per(n.oneByte.Load(), one0)
	t.Logf("per request: %.1f read deadlines, %.1f write deadlines reached the socket; %.2f reads, %.2f of one byte", r, w, rd, one)
	if r > 4 || w > 1 {
		t.Errorf("per request %.1f read and %.1f write deadlines reached the socket, want at most 4 and 1", r, w)
	}
	// A handler slower than readGrace (a loaded machine, the race
	// detector) has its background read lapse and read the socket: only
	// those may reach it, and some handler of the twenty must be quicker.
	lapsed := per(graceLapses.Load(), lapsed0)
	if one > lapsed || lapsed >= 1 {
		t.Errorf("per request %.2f background reads reached the socket (%.2f reads in all) and %.2f waits lapsed; want no more reads than lapses, and fewer lapses than requests", one, rd, lapsed)
	}
}

// holdPair returns a holdConn accepted on a loopback listener and the
// client's end; when counted, its inner connection counts the deadlines
// and reads given to it (and hides the socket's other methods).
func holdPair(t *testing.T, counted bool) (*holdConn, net.Conn, *connCounts) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var n connCounts
	accepted := make(chan net.Conn, 1)
	go func() {
		var inner net.Listener = ln
		if counted {
			inner = deadlineListener{ln, &n}
		}
		c, err := holdListener{inner}.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close() })
	return c.(*holdConn), client, &n
}

// TestHoldConnDeadlines: a deadline set before a read holds for it, one
// set and cleared with no read between never reaches the socket, and one
// set in the past while a read waits ends that read at once (how net/http
// stops its background read).
func TestHoldConnDeadlines(t *testing.T) {
	c, client, n := holdPair(t, true)
	reached := &n.read
	buf := make([]byte, 8)

	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	client.Write([]byte("x"))
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("a deadline set and cleared before the read reached the socket %d times", n)
	}

	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	t0 := time.Now()
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing to read and a deadline: %v, want the deadline", err)
	}
	if d := time.Since(t0); d < 40*time.Millisecond || d > 5*time.Second {
		t.Errorf("the deadline fired after %v, want about 50ms", d)
	}

	c.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(buf)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the read waits
	c.SetReadDeadline(time.Unix(1, 0))
	if err := ended(t, done, "a deadline in the past did not end the read under way"); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the waiting read ended with %v, want the deadline", err)
	}
}

// waitingRead starts a one-byte read on c and returns its result once
// the read waits before the socket (awaitRead).
func waitingRead(t *testing.T, c *holdConn) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	for give := time.Now().Add(10 * time.Second); time.Now().Before(give); {
		c.dl.Lock()
		waiting := c.waiting
		c.dl.Unlock()
		if waiting {
			return done
		}
		select {
		case err := <-done:
			t.Fatalf("the one-byte read ended before it waited: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	t.Fatal("the one-byte read did not wait")
	return nil
}

// TestHoldConnBackgroundReadStopsWithoutRead: net/http's background read
// (a one-byte read with no deadline) stopped as abortPendingRead stops it,
// by a read deadline long past, ends with a timeout and leaves the socket
// unread: the byte the client sent is still there for the next read. A
// deadline already past when the read starts ends it at once, unread too;
// a future one set during the wait sends the read to the socket.
func TestHoldConnBackgroundReadStopsWithoutRead(t *testing.T) {
	c, client, n := holdPair(t, true)
	c.noLapse = true // the stop, not the grace, ends the wait
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	done := waitingRead(t, c)
	c.SetReadDeadline(time.Unix(1, 0)) // net/http's aLongTimeAgo
	var ne net.Error
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("the stopped read ended with %v, want a timeout", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a one-byte read past its deadline: %v, want a timeout", err)
	}
	if r, d := n.reads.Load(), n.read.Load(); r != 0 || d != 0 {
		t.Errorf("the stopped reads made %d reads and gave %d read deadlines to the socket, want none", r, d)
	}
	c.SetReadDeadline(time.Time{})
	buf := make([]byte, 8)
	if k, err := c.Read(buf); err != nil || string(buf[:k]) != "x" {
		t.Fatalf("the next read got %q, %v; want the byte the client sent", buf[:k], err)
	}

	done = waitingRead(t, c)
	c.SetReadDeadline(time.Now().Add(time.Hour))
	client.Write([]byte("y"))
	if err := <-done; err != nil {
		t.Fatalf("a future deadline set during the wait: %v, want the read of the client's byte", err)
	}
}

// TestHoldConnBackgroundReadSeesClose: a one-byte read whose client has
// gone reads the socket after readGrace and gets the EOF (net/http then
// cancels the request), and one waiting when the server closes the
// connection goes to the socket at once and fails.
func TestHoldConnBackgroundReadSeesClose(t *testing.T) {
	c, client, _ := holdPair(t, false)
	client.Close()
	gone := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		gone <- err
	}()
	if err := ended(t, gone, "the client gone, the one-byte read did not end"); err != io.EOF {
		t.Fatalf("the client gone, the read ended with %v, want EOF", err)
	}

	c, _, _ = holdPair(t, false)
	c.noLapse = true
	done := waitingRead(t, c)
	c.Close()
	if err := ended(t, done, "the connection closed, the waiting read did not end"); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("closed, the read ended with %v, want net.ErrClosed", err)
	}
}

// ended returns the error a read started on its own goroutine sends on
// done, failing the test with stuck if none comes within 10 s.
func ended(t *testing.T, done <-chan error, stuck string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal(stuck)
		return nil
	}
}
