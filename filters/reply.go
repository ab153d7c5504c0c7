package filters

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/framing"
)

// Reply writes one response: a JSON body, or an SSE stream. It remembers
// what has been written so that the edge can render a late error correctly:
// as a JSON body while nothing is written, as an SSE error event once the
// stream has started.
type Reply struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	endpoint  Endpoint
	written   bool
	streaming bool
	flushed   bool // a flush has sent the headers (and a stream is chunked)
	// buffered counts the bytes of the stream's events written without a
	// flush; past chunkedAfter, net/http has sent the headers, chunked.
	buffered int
	seq      int
	frame    []byte // reused SSE frame buffer

	// writeTimeout bounds each write to the client (0: none); deadline is
	// the write deadline last set on the connection. aborted, once set,
	// keeps the deadline in the past: the run is over and a write blocked
	// on a client that stopped reading must return now.
	writeTimeout time.Duration
	deadline     time.Time
	mu           sync.Mutex // orders Abort against armDeadline's update
	aborted      atomic.Bool

	hold Holder // nil: writes go out as net/http writes them
}

// Holder is the client connection of a reply that may hold a stream's
// writes: between Hold and Release, what net/http writes to the connection
// (a buffer that filled mid-burst) is kept, and Release sends it in one
// write. The host gives one to HTTP/1 replies (SetHolder).
type Holder interface {
	Hold()
	Release() error
}

// SetHolder lets Buffer hold the connection's writes until the next flush.
// Call it before the first write; the caller ends a hold the handler left
// (the end of the response goes out with what was held).
func (r *Reply) SetHolder(h Holder) { r.hold = h }

// SetWriteTimeout bounds every write and flush to d: a client that stops
// reading for longer is cut off (the write fails with a timeout, see
// StalledError). Call it before the first write.
func (r *Reply) SetWriteTimeout(d time.Duration) { r.writeTimeout = d }

// SetReadDeadline sets the read deadline of the request's connection (the
// zero time clears it); see filters/body.
func (r *Reply) SetReadDeadline(t time.Time) error { return r.rc.SetReadDeadline(t) }

// abortGrace is how long writes may take once the run was interrupted:
// enough for the error reply to a client that reads, short enough that a
// write blocked on one that does not cannot hold the run.
const abortGrace = time.Second

// Abort bounds a write that is blocked now, and every later one, to
// abortGrace from now: the run is over (run_timeout, shutdown, cancel) and
// a client that stopped reading must not hold it. It may be called from
// any goroutine.
func (r *Reply) Abort() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.aborted.Store(true)
	r.rc.SetWriteDeadline(time.Now().Add(abortGrace))
}

// armDeadline moves the write deadline to writeTimeout from now before a
// write. Moving it costs a timer update, so it is moved only once a quarter
// of the timeout has passed: the deadline is always between 3/4 and all of
// the timeout away, and a stream of small writes pays one update per
// quarter timeout instead of one per token.
func (r *Reply) armDeadline() {
	if r.writeTimeout <= 0 || r.aborted.Load() {
		return
	}
	now := time.Now()
	if r.deadline.Sub(now) > r.writeTimeout*3/4 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.aborted.Load() {
		return
	}
	r.deadline = now.Add(r.writeTimeout)
	r.rc.SetWriteDeadline(r.deadline)
}

// NewReply wraps w for one request of endpoint.
func NewReply(w http.ResponseWriter, endpoint Endpoint) *Reply {
	return &Reply{w: w, rc: http.NewResponseController(w), endpoint: endpoint}
}

// Header returns the response headers; set them before writing.
func (r *Reply) Header() http.Header { return r.w.Header() }

// Written reports whether the status line has been sent.
func (r *Reply) Written() bool { return r.written }

// Streaming reports whether an SSE stream has started.
func (r *Reply) Streaming() bool { return r.streaming }

// NextSeq returns the next sequence_number of a responses event stream.
func (r *Reply) NextSeq() int {
	s := r.seq
	r.seq++
	return s
}

// The values of the headers every reply of a kind carries, allocated once
// rather than by a Header.Set per reply. net/http only reads a header's
// values, and Set and Add replace or grow the slice, never write into it.
var (
	jsonContentType = []string{"application/json"}
	sseContentType  = []string{"text/event-stream; charset=utf-8"}
	noCache         = []string{"no-cache"}
	noBuffering     = []string{"no"}
)

// JSON writes a complete JSON reply.
func (r *Reply) JSON(status int, body []byte) error {
	r.w.Header()["Content-Type"] = jsonContentType
	r.written = true
	r.armDeadline()
	r.w.WriteHeader(status)
	_, err := r.w.Write(body)
	return err
}

// StartStream sends the headers of an SSE stream. Proxies are told not to
// buffer it.
func (r *Reply) StartStream() error {
	r.OpenStream()
	r.armDeadline()
	return r.flush()
}

// OpenStream is StartStream without the flush, for a stream that has its
// first events at hand: the headers go out with them, in one write, at the
// next flush (Flush, Event, Comment, EndStream).
func (r *Reply) OpenStream() {
	h := r.w.Header()
	h["Content-Type"] = sseContentType
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = noBuffering
	r.written = true
	r.streaming = true
	r.w.WriteHeader(http.StatusOK)
}

// EndStream ends a stream whose last events were buffered (Buffer). Once
// the stream has been flushed, the server writes what is left together
// with the end of the chunked body when the handler returns: one write
// instead of two. A stream never flushed is flushed here, so that it is
// sent chunked like every other stream, not with a Content-Length. Call it
// last; the write deadline armed by the last Buffer bounds that write.
//
// A stream that wrote more than chunkedAfter bytes is chunked already (a
// burst of events that arrived together is written without a flush until
// the end, runner.Event.More): it needs no flush either.
func (r *Reply) EndStream() error {
	if r.flushed || r.buffered > chunkedAfter {
		return nil
	}
	return r.Flush()
}

// chunkedAfter is how many bytes a handler writes before net/http sends
// the headers and chunks the body (its bufferBeforeChunkingSize, 2048);
// TestEndStreamChunked fails if that ever grows past it.
const chunkedAfter = 2048

// flush sends what is buffered to the client: what net/http holds, and
// with it, in the same write, what the connection held.
func (r *Reply) flush() error {
	r.flushed = true
	err := r.rc.Flush()
	if r.hold != nil {
		if herr := r.hold.Release(); err == nil {
			err = herr
		}
	}
	return err
}

// Event writes one SSE event ("event:" omitted when name is empty) and
// flushes it to the client. A write error means the client is gone.
func (r *Reply) Event(name string, data []byte) error {
	if err := r.Buffer(name, data); err != nil {
		return err
	}
	return r.flush()
}

// Comment writes an SSE comment line (": text") and flushes it. Clients
// skip comments; proxies and load balancers see bytes, so an idle stream
// is not cut off.
func (r *Reply) Comment(text string) error {
	b := append(r.frame[:0], ": "...)
	b = append(b, text...)
	b = append(b, "\n\n"...)
	r.frame = b
	r.armDeadline()
	if _, err := r.w.Write(b); err != nil {
		return err
	}
	return r.flush()
}

// Flush sends what Buffer wrote.
func (r *Reply) Flush() error {
	r.armDeadline()
	return r.flush()
}

// Buffer writes one SSE event without flushing it: a stream that has more
// events at hand writes them all and flushes once, one syscall per burst
// instead of one per token.
func (r *Reply) Buffer(name string, data []byte) error {
	b := r.frame[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	r.frame = b
	r.buffered += len(b)
	r.armDeadline() // a full buffer writes through to the connection
	if r.hold != nil {
		r.hold.Hold() // a full buffer is kept until the flush
	}
	_, err := r.w.Write(b)
	return err
}

// BufferID is Buffer with an SSE id line, which a client sends back as
// Last-Event-ID to resume.
func (r *Reply) BufferID(id int, name string, data []byte) error {
	b := append(r.frame[:0], "id: "...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, '\n')
	r.frame = b
	if _, err := r.w.Write(b); err != nil {
		return err
	}
	return r.Buffer(name, data)
}

// Error renders e: as a JSON body with its status while nothing has been
// written, as an SSE error event once a stream has started, and not at all
// after a complete JSON reply.
func (r *Reply) Error(e *apierr.Error) error {
	if !r.written {
		e.Header(r.w.Header())
		return r.JSON(e.Status, e.Body())
	}
	if !r.streaming {
		return nil
	}
	if r.endpoint == Responses {
		return r.Event("error", framing.AppendErrorEvent(nil, r.NextSeq(), e.Type, e.Code, e.Message, e.Param))
	}
	if r.endpoint == Native {
		// Named, and without an id: a client resuming with Last-Event-ID
		// resumes after the last event it got.
		return r.Event("error", e.Body())
	}
	return r.Event("", e.Body())
}
