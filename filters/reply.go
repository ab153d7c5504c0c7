package filters

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters/apierr"
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
	seq       int
	frame     []byte // reused SSE frame buffer
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

// JSON writes a complete JSON reply.
func (r *Reply) JSON(status int, body []byte) error {
	h := r.w.Header()
	h.Set("Content-Type", "application/json")
	r.written = true
	r.w.WriteHeader(status)
	_, err := r.w.Write(body)
	return err
}

// StartStream sends the headers of an SSE stream. Proxies are told not to
// buffer it.
func (r *Reply) StartStream() error {
	h := r.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	r.written = true
	r.streaming = true
	r.w.WriteHeader(http.StatusOK)
	return r.rc.Flush()
}

// Event writes one SSE event ("event:" omitted when name is empty) and
// flushes it to the client. A write error means the client is gone.
func (r *Reply) Event(name string, data []byte) error {
	if err := r.Buffer(name, data); err != nil {
		return err
	}
	return r.rc.Flush()
}

// Comment writes an SSE comment line (": text") and flushes it. Clients
// skip comments; proxies and load balancers see bytes, so an idle stream
// is not cut off.
func (r *Reply) Comment(text string) error {
	b := append(r.frame[:0], ": "...)
	b = append(b, text...)
	b = append(b, "\n\n"...)
	r.frame = b
	if _, err := r.w.Write(b); err != nil {
		return err
	}
	return r.rc.Flush()
}

// Flush sends what Buffer wrote.
func (r *Reply) Flush() error { return r.rc.Flush() }

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
		ev, _ := json.Marshal(struct { // cannot fail: strings and ints
			Type    string  `json:"type"`
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Param   *string `json:"param"`
			Seq     int     `json:"sequence_number"`
		}{"error", e.Code, e.Message, nilIfEmpty(e.Param), r.NextSeq()})
		return r.Event("error", ev)
	}
	return r.Event("", e.Body())
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
