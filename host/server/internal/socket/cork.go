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
//
// No lock is held while the connection writes: one goroutine at a time
// writes (writing), and a frame written meanwhile joins the queue that
// writer sends after its own bytes, in order. So a client that stops
// reading blocks only the write to it (until its deadline, or a close
// cuts it), never a goroutine that writes a frame or starts a close.
type Cork struct {
	net.Conn
	burst   sync.Mutex
	kept    atomic.Int64 // cap of the buffers between bursts, for held
	mu      sync.Mutex
	idle    sync.Cond // signalled when writing ends; L is &mu
	corked  bool
	writing bool  // a goroutine is in Conn.Write (or about to be)
	err     error // the first failed write's: the socket is done
	buf     []byte
	spare   []byte // the buffer being written, when writing
}

// newCork wraps c.
func newCork(c net.Conn) *Cork {
	k := &Cork{Conn: c}
	k.idle.L = &k.mu
	return k
}

// Write implements net.Conn.
func (k *Cork) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return 0, k.err
	}
	if k.corked || k.writing {
		k.buf = append(k.buf, p...)
		return len(p), nil
	}
	k.writing = true
	k.mu.Unlock()
	_, err := k.Conn.Write(p)
	k.mu.Lock()
	k.flushLocked(err)
	return len(p), k.err
}

// flushLocked, called with mu held by the writing goroutine once its
// write returned err, sends what was queued meanwhile (out of a burst; a
// burst's frames wait for its release), then ends writing. mu is released
// during each write.
func (k *Cork) flushLocked(err error) {
	for err == nil && len(k.buf) > 0 && !k.corked {
		b := k.buf
		k.buf = k.spare[:0]
		k.mu.Unlock()
		_, err = k.Conn.Write(b)
		k.mu.Lock()
		k.spare = b
	}
	if err != nil && k.err == nil {
		k.err = err
	}
	k.writing = false
	k.idle.Broadcast()
}

// hold starts a burst, once the one in progress is done.
func (k *Cork) hold() {
	k.burst.Lock()
	k.mu.Lock()
	k.corked = true
	k.mu.Unlock()
}

// release ends a burst: what it held goes out in one write, under the
// connection's write deadline, after what another goroutine is writing.
// It returns once its bytes are written (or the socket failed).
func (k *Cork) release() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.corked = false
	for k.writing {
		k.idle.Wait() // the writer sends the burst's bytes after its own
	}
	if k.err == nil && len(k.buf) > 0 {
		k.writing = true
		k.flushLocked(nil)
	}
	for _, b := range []*[]byte{&k.buf, &k.spare} {
		if cap(*b) > spareMax {
			*b = nil // a large reply's buffer is not kept for the socket's life
		} else {
			*b = (*b)[:0]
		}
	}
	k.kept.Store(int64(cap(k.buf) + cap(k.spare)))
	return k.err
}

// done ends a burst after its release: the next may start.
func (k *Cork) done() { k.burst.Unlock() }

// held is the capacity of the buffers the Cork keeps between bursts.
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
	h.cork = newCork(c)
	return h.cork, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.cork, 4096)), nil
}
