package ui

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// Hub fans run starts and ends out to the pages watching the live stream.
// It is a runner.Observer, called on the run's path, so publishing never
// blocks: each subscriber has a bounded buffer, and one that falls behind
// is dropped and told to reload instead of holding runs up.
type Hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

// Limits of the live stream.
const (
	subscriberBuffer = 256
	maxSubscribers   = 64
	keepaliveEvery   = 15 * time.Second
	writeWait        = 10 * time.Second
)

type subscriber struct {
	ch   chan []byte
	done chan struct{} // closed when dropped (too slow) or the hub closes
	slow bool          // dropped for falling behind (under Hub.mu)
}

var _ runner.Observer = (*Hub)(nil)

// NewHub returns a hub with no subscribers.
func NewHub() *Hub { return &Hub{subs: map[*subscriber]struct{}{}} }

// RunStarted implements runner.Observer.
func (h *Hub) RunStarted(r *runner.Run) { h.publish("run.started", r) }

// RunFinished implements runner.Observer.
func (h *Hub) RunFinished(r *runner.Run) { h.publish("run.ended", r) }

func (h *Hub) publish(kind string, r *runner.Run) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return // nobody watching: no encoding on the run's path
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	msg := append(append([]byte("event: "+kind+"\ndata: "), b...), '\n', '\n')
	for s := range h.subs {
		select {
		case s.ch <- msg:
		default:
			s.slow = true
			h.drop(s)
		}
	}
}

// drop removes s; called with mu held.
func (h *Hub) drop(s *subscriber) {
	delete(h.subs, s)
	close(s.done)
}

func (h *Hub) subscribe() *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.subs) >= maxSubscribers {
		return nil
	}
	s := &subscriber{ch: make(chan []byte, subscriberBuffer), done: make(chan struct{})}
	h.subs[s] = struct{}{}
	return s
}

func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		h.drop(s)
	}
}

// Close ends every stream (server shutdown) and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.drop(s)
	}
}

// stream answers GET /ui/api/stream: server-sent events run.started and
// run.ended carrying the run object, ": keepalive" comments while quiet,
// and a final "reload" event when this page fell behind.
//
// The stream lasts as long as its session: logout, the session's lifetime,
// and a reload that removes or rotates its token end it at once (the
// session's done channel), and each keepalive checks the session again.
func (u *UI) stream(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.current(r)
	if !ok {
		writeError(w, errNoSession)
		return
	}
	s := u.hub.subscribe()
	if s == nil {
		writeError(w, apierr.Unavailable("too many live streams open; reload later", 5, nil))
		return
	}
	defer u.hub.unsubscribe(s)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// The admin listener's WriteTimeout is for whole requests: each write
	// of this long one gets its own deadline instead.
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: 2000\n: ready\n\n")) {
		return
	}
	tick := time.NewTicker(keepaliveEvery)
	defer tick.Stop()
	expiry := time.NewTimer(time.Until(sess.expires))
	defer expiry.Stop()
	for {
		select {
		case msg := <-s.ch:
			if !write(msg) {
				return
			}
		case <-tick.C:
			if _, ok := u.current(r); !ok {
				return
			}
			if !write([]byte(": keepalive\n\n")) {
				return
			}
		case <-sess.done:
			return
		case <-expiry.C:
			return
		case <-s.done:
			u.hub.mu.Lock()
			slow := s.slow
			u.hub.mu.Unlock()
			if slow {
				write([]byte("event: reload\ndata: {}\n\n"))
			}
			return
		case <-r.Context().Done():
			return
		}
	}
}
