package socket

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Cork holds the frames written to a socket while a burst is being
// written, and sends them in one write when it ends: coder/websocket
// flushes every message, and a turn's events come in bursts (a token's
// delta with its item and part events, the done events with
// response.completed). Out of a burst writes pass through (pings, pongs,
// close frames). Writes are ordered: a frame written by another goroutine
// during a burst goes out with it. Bursts take turns (the turns of several
// lanes write at once): one holds the Cork from hold to done.
type Cork struct {
	net.Conn
	burst  sync.Mutex
	kept   atomic.Int64 // cap(buf) between bursts, for held
	mu     sync.Mutex
	corked bool
	buf    []byte
}

// Write implements net.Conn.
func (k *Cork) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.corked {
		k.buf = append(k.buf, p...)
		return len(p), nil
	}
	return k.Conn.Write(p)
}

// hold starts a burst, once the one in progress is done.
func (k *Cork) hold() {
	k.burst.Lock()
	k.mu.Lock()
	k.corked = true
	k.mu.Unlock()
}

// release ends a burst: what it held goes out in one write, under the
// connection's write deadline.
func (k *Cork) release() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.corked = false
	if len(k.buf) == 0 {
		return nil
	}
	_, err := k.Conn.Write(k.buf)
	if cap(k.buf) > spareMax {
		k.buf = nil // a large reply's buffer is not kept for the socket's life
	} else {
		k.buf = k.buf[:0]
	}
	k.kept.Store(int64(cap(k.buf)))
	return err
}

// done ends a burst after its release: the next may start.
func (k *Cork) done() { k.burst.Unlock() }

// held is the capacity of the buffer the Cork keeps between bursts.
func (k *Cork) held() int { return int(k.kept.Load()) }

// Accept upgrades the request to a WebSocket whose writes go through a
// Cork. Compression is off: events are small and latency matters more.
func Accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *Cork, error) {
	hw := &hijackWriter{ResponseWriter: w}
	// Browsers cannot send a bearer token on a WebSocket, so the origin
	// check guards nothing the token does not: clients are programs.
	c, err := websocket.Accept(hw, r, &websocket.AcceptOptions{InsecureSkipVerify: true,
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, nil, err
	}
	return c, hw.cork, nil
}

// hijackWriter hands coder/websocket the connection wrapped in a Cork.
type hijackWriter struct {
	http.ResponseWriter
	cork *Cork
}

// Hijack implements http.Hijacker. The 101 reply is already sent (net/http
// flushes it on hijack); the reader keeps what the server had buffered.
func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.cork = &Cork{Conn: c}
	return h.cork, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.cork, 4096)), nil
}
