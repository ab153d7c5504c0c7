package server

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// deadlineConn counts the deadlines that reach a connection.
type deadlineConn struct {
	net.Conn
	read, write *atomic.Int64
}

func (c deadlineConn) SetReadDeadline(t time.Time) error {
	c.read.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c deadlineConn) SetWriteDeadline(t time.Time) error {
	c.write.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

func (c deadlineConn) SetDeadline(t time.Time) error {
	c.read.Add(1)
	c.write.Add(1)
	return c.Conn.SetDeadline(t)
}

type deadlineListener struct {
	net.Listener
	read, write *atomic.Int64
}

func (l deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return deadlineConn{c, l.read, l.write}, nil
}

// TestSmallRequestMovesFewDeadlines: a small request's deadlines reach its
// socket only when a read or write needs them. net/http and the chain
// set them eight times for reading and twice for writing per request; of
// those, the ones set and replaced before any read or write are never
// given to the socket.
func TestSmallRequestMovesFewDeadlines(t *testing.T) {
	var read, write atomic.Int64
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := serveListener(t, cfg, testWriter{t}, func(ln net.Listener) net.Listener {
		return deadlineListener{ln, &read, &write}
	})
	postOK(t, h, "/v1/chat/completions", chatBody) // open the connection
	const n = 20
	r0, w0 := read.Load(), write.Load()
	for range n {
		postOK(t, h, "/v1/chat/completions", chatBody)
	}
	r, w := float64(read.Load()-r0)/n, float64(write.Load()-w0)/n
	t.Logf("per request: %.1f read deadlines, %.1f write deadlines reached the socket", r, w)
	if r > 4 || w > 1 {
		t.Errorf("per request %.1f read and %.1f write deadlines reached the socket, want at most 4 and 1", r, w)
	}
}

// holdPair returns a holdConn accepted on a loopback listener and the
// client's end; when counted, its inner connection counts the read
// deadlines given to it (and hides the socket's other methods).
func holdPair(t *testing.T, counted bool) (*holdConn, net.Conn, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var read, write atomic.Int64
	accepted := make(chan net.Conn, 1)
	go func() {
		var inner net.Listener = ln
		if counted {
			inner = deadlineListener{ln, &read, &write}
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
	return c.(*holdConn), client, &read
}

// TestHoldConnDeadlines: a deadline set before a read holds for it, one
// set and cleared with no read between never reaches the socket, and one
// set in the past while a read waits ends that read at once (how net/http
// stops its background read).
func TestHoldConnDeadlines(t *testing.T) {
	c, client, reached := holdPair(t, true)
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
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the waiting read ended with %v, want the deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline in the past did not end the read under way")
	}
}
