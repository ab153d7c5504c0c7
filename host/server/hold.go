package server

import (
	"context"
	"crypto/tls"
	"net"
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
	return &holdConn{Conn: c}, nil
}

// holdConn is a connection whose writes an HTTP/1 reply may hold. It is
// written by the goroutine serving the connection only (its handler, then
// net/http finishing the response), so it needs no lock.
type holdConn struct {
	net.Conn
	held bool   // the reply holds: keep what is written
	buf  []byte // written while held, not yet sent
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
		return c.Conn.Write(p)
	}
	return c.send(p)
}

// send writes what is kept followed by p, in one write.
func (c *holdConn) send(p []byte) (int, error) {
	b := append(c.buf, p...)
	_, err := c.Conn.Write(b)
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
