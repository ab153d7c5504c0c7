package socket

import (
	"context"

	"github.com/tidwall/gjson"
)

// Lanes: a response.create may name a stream_id (openai-go's Lane). The
// turns of one lane run in order, one at a time, and every event of a
// lane's turn echoes its stream_id; the turns of different lanes run side
// by side, at most maxLanes at once. Events without a stream_id are one
// lane of their own (""), as every turn was before lanes.

// maxLanes bounds the turns a socket runs at once; each is a run, counted
// by the in-flight limits like any other.
const maxLanes = 4

// maxQueued bounds the events waiting behind the turns in flight, in all
// lanes together (their bytes are bounded by Config.MaxBytes); past it the
// socket stops reading until a turn starts.
const maxQueued = 64

// steerLane is the lane of response.steer events: answered at once, not
// behind a turn in flight.
const steerLane = "\x00steer"

// laneOf is the lane of a client event: its stream_id (top level, or in a
// nested "response" object, as parse reads it), steerLane for a steer, ""
// for none. parse checks the stream_id itself.
func laneOf(msg []byte) string {
	r := gjson.GetManyBytes(msg, "type", "stream_id", "response.stream_id")
	if r[0].Str == eventSteer {
		return steerLane
	}
	if r[1].Type == gjson.String {
		return r[1].Str
	}
	if r[2].Type == gjson.String {
		return r[2].Str
	}
	return ""
}

// validStreamID reports whether id is a stream_id: 1 to 256 ASCII
// letters, digits, underscores, hyphens or periods (openai-go's rule).
func validStreamID(id string) bool {
	if len(id) == 0 || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// dispatch is the turn loop's view of the lanes; only Serve's goroutine
// touches it. A turn runs in a goroutine of its own and reports on
// finished.
type dispatch struct {
	queues   map[string][]event
	active   map[string]bool
	queued   int // events in queues
	running  int // turns in flight
	spares   []*Writer
	finished chan finished
}

// finished is a turn's report: its lane and the Writer its lane's next
// turn may reuse.
type finished struct {
	lane  string
	spare *Writer
}

func newDispatch() *dispatch {
	return &dispatch{queues: map[string][]event{}, active: map[string]bool{}, finished: make(chan finished, maxLanes)}
}

// add queues ev in its lane.
func (d *dispatch) add(ev event) {
	d.queues[ev.lane] = append(d.queues[ev.lane], ev)
	d.queued++
}

// start starts the next turn of every lane that has none in flight, while
// fewer than maxLanes run. Nothing starts once the connection is gone.
func (d *dispatch) start(ctx context.Context, k *Conn) {
	for lane, q := range d.queues {
		if d.running >= maxLanes || ctx.Err() != nil {
			return
		}
		if d.active[lane] || len(q) == 0 {
			continue
		}
		ev := q[0]
		q[0] = event{}
		switch {
		case len(q) > 1:
			d.queues[lane] = q[1:]
		case lane == "":
			d.queues[lane] = q[:0] // the usual lane keeps its slice
		default:
			delete(d.queues, lane)
		}
		d.queued--
		k.queued.Add(-ev.charged)
		d.active[lane] = true
		d.running++
		k.busy.Store(true)
		var spare *Writer
		if n := len(d.spares); n > 0 {
			spare, d.spares = d.spares[n-1], d.spares[:n-1]
		}
		go func() { d.finished <- finished{lane, k.turn(ctx, ev, spare)} }()
	}
}

// done records a finished turn: its lane may start the next, its Writer
// is kept for reuse, and what the connection keeps is weighed again.
func (d *dispatch) done(k *Conn, f finished) {
	delete(d.active, f.lane)
	d.running--
	if len(d.spares) < maxLanes {
		d.spares = append(d.spares, f.spare)
	}
	n := int64(k.cache.Bytes()) + int64(k.cork.held())
	for _, w := range d.spares {
		n += int64(cap(w.buf) + cap(w.terminal) + cap(w.scratch))
	}
	k.kept.Store(n)
	k.busy.Store(d.running > 0)
}

// wait drops the queued events and waits for the turns in flight.
func (d *dispatch) wait(k *Conn) {
	for lane, q := range d.queues {
		for _, ev := range q {
			k.queued.Add(-ev.charged)
		}
		delete(d.queues, lane)
	}
	d.queued = 0
	for d.running > 0 {
		d.done(k, <-d.finished)
	}
}
