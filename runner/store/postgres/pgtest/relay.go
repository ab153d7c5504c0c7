package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Relay is a TCP relay between a client and the test cluster: a test
// gives the client Relay.DSN, then counts the bytes the client sent the
// server (Sent), or cuts the database away (Cut: every connection closed,
// new ones refused) without stopping the cluster other tests share, and
// brings it back (Restore).
type Relay struct {
	// DSN is the given DSN with its host the relay's.
	DSN string

	target string
	ln     net.Listener
	sent   atomic.Int64

	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

// NewRelay starts a relay to dsn's server, closed when the test ends.
func NewRelay(t testing.TB, dsn string) *Relay {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{target: u.Host, ln: ln}
	u.Host = ln.Addr().String()
	r.DSN = u.String()
	go r.accept()
	t.Cleanup(func() { ln.Close(); r.Cut() })
	return r
}

func (r *Relay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.down {
			r.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", r.target)
		if err != nil {
			r.mu.Unlock()
			c.Close()
			continue
		}
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		go func() { io.Copy(counting{up, &r.sent}, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// Sent is how many bytes clients have sent the server through the relay.
func (r *Relay) Sent() int64 { return r.sent.Load() }

// Cut closes every connection and refuses new ones until Restore.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = true
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// Restore accepts connections again after Cut.
func (r *Relay) Restore() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = false
}

// counting is a writer that adds what it writes to n.
type counting struct {
	w io.Writer
	n *atomic.Int64
}

func (c counting) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
