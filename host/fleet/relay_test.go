package fleet_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// relay is a TCP relay between the hosts and PostgreSQL that the test can
// cut (closing every connection and refusing new ones) and restore: the
// database "goes away" for the host without stopping the cluster other
// tests share.
type relay struct {
	dsn    string
	target string
	ln     net.Listener

	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

func newRelay(t *testing.T, dsn string) *relay {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{target: u.Host, ln: ln}
	u.Host = ln.Addr().String()
	r.dsn = u.String()
	go r.accept()
	t.Cleanup(func() { ln.Close(); r.cut() })
	return r
}

func (r *relay) accept() {
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
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = true
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

func (r *relay) restore() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = false
}
