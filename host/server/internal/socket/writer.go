package socket

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters/apierr"
)

// Writer is the http.ResponseWriter a turn's chain writes to. The chain
// frames a streamed Response as SSE (filters.Reply); Writer turns every
// event of it into one text message carrying the event's data, the same
// object an SSE client gets in its data line. Comments (keepalives) are
// dropped: the socket has pings. Keeping the chain's writer means the
// turn runs the POST path unchanged; the framing it undoes is a scan for
// "data: " and the blank line, which never occur inside compacted JSON.
//
// Writes go out at the chain's flushes, each event a message and each
// flush one write (Cork), under the write deadline the chain sets
// (filters.Reply.SetWriteTimeout): a client that stops reading is cut off
// as on SSE, and the error the chain sees is the connection's
// os.ErrDeadlineExceeded, so the run is recorded client_stalled. The
// deadline is on the connection only while a flush writes: pings and
// pongs between the chain's writes (a model slow to its first token) must
// not meet a deadline armed for a write long done.
type Writer struct {
	c    *websocket.Conn
	cork *Cork
	ctx  context.Context // the turn's

	mu       sync.Mutex // guards deadline against Abort's goroutine
	deadline time.Time
	flushing atomic.Bool
	header   http.Header
	status   int
	buf      []byte // SSE bytes written since the last flush

	// sent counts the events sent this turn: the next sequence_number.
	sent int
	// prevID, when set, is written into the previous_response_id of every
	// Response object sent (see Turn.PrevID).
	prevID string
	// terminal is a copy of the last response.completed, .failed or
	// .incomplete event: the turn's outcome and output, for the cache;
	// kept only when keep is set.
	terminal []byte
	keep     bool
	// whole holds the chain's flushes until End, up to wholeMax bytes: a
	// client that asked for stream:false waits for the whole answer, and
	// gets its events in one write instead of one per burst (on a
	// loopback or LAN, each write costs more CPU than the events in it).
	whole bool
	// stalled, when set, is called when a write meets its deadline, before
	// the socket is closed: the client stopped reading (Conn.stalled).
	stalled func()
	// gone, when set, is called when a write fails otherwise, before the
	// socket is closed: the client left (Conn.gone). The reader learns it
	// too, but later: a close frame's reply can fail this turn's write
	// before the read that met the close returns, and the turn loop must
	// not start the events queued behind this turn in that gap.
	gone func()
	// stream is the turn's lane ("" for none): every message it sends
	// echoes it as stream_id, built in scratch.
	stream  string
	scratch []byte
}

// wholeMax bounds what a whole turn holds before it writes anyway.
const wholeMax = 64 << 10

// spareMax bounds each buffer a finished turn leaves for the next one
// (Writer.shed, Cork.release): a turn's events and terminal event are
// mostly far smaller, and a socket must not keep a large turn's buffers
// while it idles.
const spareMax = 16 << 10

// NewWriter writes the events of one turn to c.
func NewWriter(ctx context.Context, c *websocket.Conn, cork *Cork) *Writer {
	return &Writer{c: c, cork: cork, ctx: ctx}
}

// reuse takes the buffers and header map of p, the previous turn's
// Writer, which is done: a turn's events, its terminal event and its run
// headers are about the same size every turn. A large buffer is not kept
// for the socket's life.
func (w *Writer) reuse(p *Writer) {
	if cap(p.buf) <= spareMax {
		w.buf = p.buf[:0]
	}
	if cap(p.terminal) <= spareMax {
		w.terminal = p.terminal[:0]
	}
	if cap(p.scratch) <= spareMax {
		w.scratch = p.scratch[:0]
	}
	clear(p.header)
	w.header = p.header
}

// shed drops the buffers of a finished turn that are larger than spareMax
// (the terminal event once the cache has read it): what the socket keeps
// between turns stays small, however large the turn was.
func (w *Writer) shed() {
	if cap(w.buf) > spareMax {
		w.buf = nil
	}
	if cap(w.terminal) > spareMax {
		w.terminal = nil
	} else {
		w.terminal = w.terminal[:0]
	}
	if cap(w.scratch) > spareMax {
		w.scratch = nil
	}
}

// Header implements http.ResponseWriter: the run headers the chain sets
// land here (there is no HTTP reply per turn), where the turn reads them.
func (w *Writer) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

// WriteHeader implements http.ResponseWriter.
func (w *Writer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Status is the status the chain wrote (0: none; a stream is 200).
func (w *Writer) Status() int { return w.status }

// Write implements http.ResponseWriter; nothing is sent before a flush.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

// FlushError sends the events written since the last flush
// (http.ResponseController.Flush).
func (w *Writer) FlushError() error {
	if w.whole && len(w.buf) < wholeMax {
		return nil
	}
	return w.burst(w.events)
}

// End sends what the turn left: the events the chain leaves for the end of
// the reply (as an HTTP server writes them when the handler returns), and
// those a whole turn held.
func (w *Writer) End() error {
	w.whole = false
	return w.FlushError()
}

// burst writes what f sends in one write under the write deadline.
func (w *Writer) burst(f func() error) error {
	w.cork.hold()
	err := f()
	w.flushing.Store(true)
	w.cork.SetWriteDeadline(w.Deadline())
	rerr := w.cork.release()
	w.flushing.Store(false)
	w.cork.SetWriteDeadline(time.Time{})
	w.cork.done()
	if err == nil {
		err = rerr
	}
	if err != nil {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if w.stalled != nil {
				w.stalled()
			}
		case w.gone != nil:
			w.gone()
		}
		w.c.CloseNow() // a frame may be cut: the socket is done
	}
	return err
}

func (w *Writer) events() error {
	b := w.buf
	for len(b) > 0 {
		end := bytes.Index(b, []byte("\n\n"))
		if end < 0 {
			break // an incomplete event waits for the rest
		}
		ev := b[:end]
		b = b[end+2:]
		if err := w.event(ev); err != nil {
			w.buf = w.buf[:0]
			return err
		}
	}
	w.buf = append(w.buf[:0], b...)
	return nil
}

// event sends the data of one SSE event; comments and ids are dropped.
func (w *Writer) event(ev []byte) error {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return w.send(w.patch(data))
		}
	}
	return nil
}

// patch restores previous_response_id on the Response objects of a turn
// whose continuation the socket expanded, and keeps the terminal event.
func (w *Writer) patch(data []byte) []byte {
	if w.prevID == "" && !w.keep {
		return data
	}
	terminal := false
	switch string(eventType(data)) {
	case "response.created", "response.in_progress", "response.queued":
	case "response.completed", "response.failed", "response.incomplete":
		terminal = true
	default:
		return data
	}
	if w.prevID != "" {
		if p, err := sjson.SetBytes(data, "response.previous_response_id", w.prevID); err == nil {
			data = p
		}
	}
	if terminal {
		w.terminal = append(w.terminal[:0], data...)
	}
	return data
}

// Send writes one text message, in a write of its own.
func (w *Writer) Send(msg []byte) error {
	return w.burst(func() error { return w.send(msg) })
}

// send writes one message into the current burst.
func (w *Writer) send(msg []byte) error {
	if w.stream != "" {
		msg = w.lane(msg)
	}
	// Into the Cork's memory: it never blocks, so no context bounds it (a
	// cancellable one costs coder/websocket a timer per message); the
	// burst's one write is bounded by the deadline.
	if err := w.c.Write(context.Background(), websocket.MessageText, msg); err != nil {
		return err
	}
	w.sent++
	return nil
}

// lane is msg with the turn's stream_id added as its last field.
func (w *Writer) lane(msg []byte) []byte {
	if len(msg) < 2 || msg[len(msg)-1] != '}' {
		return msg
	}
	b := append(w.scratch[:0], msg[:len(msg)-1]...)
	b = append(b, `,"stream_id":`...)
	b = strconv.AppendQuote(b, w.stream)
	w.scratch = append(b, '}')
	return w.scratch
}

// SetWriteDeadline bounds the flushes that follow, and one in flight
// (http.ResponseController.SetWriteDeadline). Abort calls it from another
// goroutine to cut a blocked write short.
func (w *Writer) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.mu.Unlock()
	if w.flushing.Load() {
		w.cork.SetWriteDeadline(t)
	}
	return nil
}

// Deadline is the current write deadline (zero: none).
func (w *Writer) Deadline() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deadline
}

// SetReadDeadline is a no-op: a turn's body is its event, already read.
func (w *Writer) SetReadDeadline(time.Time) error { return nil }

// Sent is the number of events sent this turn.
func (w *Writer) Sent() int { return w.sent }

// Terminal is the turn's last response.completed, .failed or .incomplete
// event (nil: none was sent).
func (w *Writer) Terminal() []byte { return w.terminal }

// Error sends e as an error event: {"type":"error","status",
// "error":{"message","type","param","code"},"sequence_number"}, the shape
// OpenAI's socket sends, so SDKs read the status and code as from HTTP.
func (w *Writer) Error(e *apierr.Error) error {
	return w.Send(ErrorEvent(e, w.sent))
}

// ErrorEvent is the error event of e at sequence number seq.
func ErrorEvent(e *apierr.Error, seq int) []byte {
	b := make([]byte, 0, 160+len(e.Message))
	b = append(b, `{"type":"error","status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"error":`...)
	b = append(b, e.Object()...)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	return append(b, '}')
}
