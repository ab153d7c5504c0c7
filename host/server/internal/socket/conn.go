// Package socket is the WebSocket mode of /v1/responses: one connection,
// many turns. Each response.create runs as a POST /v1/responses would (the
// host runs the chain, see Config.Turn); this package owns what is the
// socket's own: reading client events in order, one turn at a time, the
// connection-local state of store:false responses (Cache), pre-warms,
// error events, pings, the connection's age limit and its close codes.
package socket

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// Close codes (RFC 6455 §7.4.1).
const (
	// CloseAgeLimit ends a connection at its age limit, after the
	// websocket_connection_limit_reached error event: a normal closure, the
	// client opens a new socket.
	CloseAgeLimit = websocket.StatusNormalClosure
	// CloseShutdown ends a connection when the host shuts down (going away).
	CloseShutdown = websocket.StatusGoingAway
	// CloseBinary answers a binary message: events are JSON text.
	CloseBinary = websocket.StatusUnsupportedData
)

// Request is one turn for the host to run.
type Request struct {
	// Body is the create body for the chain (stream on).
	Body []byte
	// SessionID and ThreadID continue a cached response's session and
	// thread; "" for none.
	SessionID, ThreadID string
	// Remember, when set, keeps the turn in the connection's cache once
	// its run completed: object is the Response the client got, session
	// and thread its run's. The host hands it to the turn's commit
	// (filters/turn, Turn.Remember), which calls it before the turn's
	// last event. nil: nothing of the turn is kept (a stored response).
	Remember func(object []byte, sessionID, threadID string)
}

// Config is what a connection needs from its host.
type Config struct {
	// MaxAge ends the connection (0: never).
	MaxAge time.Duration
	// IdleTimeout ends a connection that ran no turn and got no client
	// event for this long, as MaxAge does (0: never).
	IdleTimeout time.Duration
	// PingInterval is how often an idle connection is pinged; a ping not
	// answered within it closes the connection (0: no pings).
	PingInterval time.Duration
	// MaxCached bounds the responses the connection remembers.
	MaxCached int
	// MaxBytes bounds what the connection keeps between turns (its cache,
	// counted by capacity, and its spare buffers) together with the client
	// events it read ahead while a turn ran: an event that would pass it
	// is answered with an error event, unrun.
	MaxBytes int64
	// WriteTimeout bounds each write the socket makes itself (error
	// events, pre-warms, the age limit's event), as limits.write_timeout
	// bounds the chain's (0: a default of 10 s).
	WriteTimeout time.Duration
	// Model is the one model the host serves (a pre-warm checks it).
	Model string
	// Turn runs one turn through the POST chain, writing its events to w,
	// and returns the error to send as an error event (nil: none, or the
	// client is gone).
	Turn func(ctx context.Context, r Request, w *Writer) *apierr.Error
	// Admit runs the auth stage (token, tenant, rate limit) for a turn that
	// runs no chain: a pre-warm.
	Admit func(ctx context.Context) *apierr.Error
}

// Conn is one accepted socket.
type Conn struct {
	c     *websocket.Conn
	cork  *Cork
	cfg   Config
	cache *Cache
	drain chan struct{} // closed by the Hub at shutdown
	// cancel ends the connection's context with why: the client left
	// (runner.ErrClientGone) or stopped reading (runner.ErrClientStalled),
	// which the run in flight is recorded with.
	cancel context.CancelCauseFunc
	// onStall is stalled as a func value, made once: each turn's Writer
	// calls it.
	onStall func()
	// onGone ends the connection's context when a turn's write fails: the
	// client left (Writer.gone).
	onGone func()
	// busy is set while a turn runs; kept is what the connection keeps
	// between turns (set after each), queued the bytes of the client
	// events read ahead and not started: the reader weighs each event
	// against MaxBytes.
	busy   atomic.Bool
	kept   atomic.Int64
	queued atomic.Int64
}

// New wraps an accepted socket.
func New(c *websocket.Conn, cork *Cork, cfg Config) *Conn {
	k := &Conn{c: c, cork: cork, cfg: cfg, cache: NewCache(cfg.MaxCached, cacheBytes(cfg.MaxBytes)), drain: make(chan struct{})}
	k.onStall = k.stalled
	k.onGone = func() { k.cancel(runner.ErrClientGone) }
	return k
}

// cacheBytes is the cache's share of a connection's budget: all of it but
// the spare buffers (three per lane's Writer, and the Cork's).
func cacheBytes(budget int64) int {
	return int(max(0, budget-(3*maxLanes+1)*spareMax))
}

// event is a client message read ahead, or the refusal of one that would
// have passed the connection's budget (its bytes are not kept).
type event struct {
	msg     []byte
	charged int64  // what msg counts in queued
	lane    string // its stream_id ("" for none)
	refused *apierr.Error
}

// Serve reads client events and runs them as turns until the client
// closes, the connection reaches its age or its idle timeout, or the hub
// drains it. Turns of one lane (stream_id) run in order, one at a time;
// lanes run side by side (lanes.go). Closing the socket cancels the turns
// in flight (their runs are recorded cancelled, client_disconnect;
// client_stalled when the client stopped reading), and the events queued
// behind them are dropped unrun.
func (k *Conn) Serve(ctx context.Context) {
	ctx, k.cancel = context.WithCancelCause(ctx)
	defer k.cancel(runner.ErrClientGone)
	defer k.c.CloseNow()
	events := make(chan event, 8)
	go k.read(ctx, events)
	if k.cfg.PingInterval > 0 {
		go k.ping(ctx)
	}
	// The age limit and a drain end the socket; either wins over a
	// waiting event: no turn starts after it, those in flight finish.
	end := make(chan func(context.Context), 1)
	go k.ending(ctx, end)
	var idle *time.Timer
	var idled <-chan time.Time
	if k.cfg.IdleTimeout > 0 {
		idle = time.NewTimer(k.cfg.IdleTimeout)
		defer idle.Stop()
		idled = idle.C
	}
	d := newDispatch()
	defer d.wait(k)
	for {
		select {
		case f := <-end:
			d.wait(k)
			f(ctx)
			return
		default:
		}
		in := events
		if d.queued >= maxQueued {
			in = nil // the reader waits: TCP holds the rest
		}
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			if ctx.Err() != nil {
				k.queued.Add(-ev.charged)
				return // the connection is gone: what it queued runs no turn
			}
			d.add(ev)
			d.start(ctx, k)
		case f := <-d.finished:
			d.done(k, f)
			d.start(ctx, k)
			if idle != nil && d.running == 0 {
				idle.Reset(k.cfg.IdleTimeout)
			}
		case f := <-end:
			d.wait(k)
			f(ctx)
			return
		case <-idled:
			if d.running > 0 || d.queued > 0 {
				idle.Reset(k.cfg.IdleTimeout)
				continue
			}
			k.limit(ctx, "idle for "+k.cfg.IdleTimeout.String())
			return
		case <-ctx.Done():
			return
		}
	}
}

// ending sends on end how the socket is to end: at its age limit or at the
// hub's drain.
func (k *Conn) ending(ctx context.Context, end chan<- func(context.Context)) {
	var age <-chan time.Time
	if k.cfg.MaxAge > 0 {
		t := time.NewTimer(k.cfg.MaxAge)
		defer t.Stop()
		age = t.C
	}
	select {
	case <-age:
		end <- func(ctx context.Context) { k.limit(ctx, k.cfg.MaxAge.String()) }
	case <-k.drain:
		end <- func(context.Context) { k.c.Close(CloseShutdown, "server shutting down") }
	case <-ctx.Done():
	}
}

// read passes text messages to the turn loop, in order; it keeps reading
// during a turn, so control frames (ping, pong, close) are answered and a
// close cancels the turn. A binary message closes the socket. An event
// read while a turn runs is weighed against the budget (Config.MaxBytes)
// with what the connection keeps and what is queued already; one that
// would pass it is dropped and answered, in its turn, with an error.
func (k *Conn) read(ctx context.Context, events chan<- event) {
	defer close(events)
	for {
		typ, msg, err := k.c.Read(ctx)
		if err != nil {
			k.cancel(runner.ErrClientGone)
			return
		}
		if typ != websocket.MessageText {
			k.c.Close(CloseBinary, "client events are JSON text messages")
			k.cancel(runner.ErrClientGone)
			return
		}
		ev := event{msg: msg, lane: laneOf(msg)}
		if k.busy.Load() {
			n := int64(cap(msg))
			if k.kept.Load()+k.queued.Load()+n > k.cfg.MaxBytes {
				ev = event{lane: ev.lane, refused: overBudget(k.cfg.MaxBytes)}
			} else {
				ev.charged = n
				k.queued.Add(n)
			}
		}
		select {
		case events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// overBudget refuses an event sent behind a turn in flight that the
// connection cannot hold: the client sends faster than its turns run.
func overBudget(budget int64) *apierr.Error {
	e := apierr.New(apierr.CodeRateLimited, "this event was not run: with the turn in flight and the events queued behind it, the socket would hold more than "+
		strconv.FormatInt(budget, 10)+" bytes (websocket.max_socket_bytes); wait for a turn's end before sending the next")
	e.RetryAfter = 1
	return e
}

// ping keeps an idle connection alive through load balancers and finds a
// peer that went away without closing. A peer that answers no ping in
// time stopped reading (or its network went): the run in flight is
// recorded client_stalled, as when a write meets its deadline.
func (k *Conn) ping(ctx context.Context) {
	t := time.NewTicker(k.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, k.cfg.PingInterval)
		err := k.c.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			k.stalled()
			return
		}
	}
}

// stalled ends a connection whose client stopped reading.
func (k *Conn) stalled() {
	k.cancel(runner.ErrClientStalled)
	k.c.CloseNow()
}

// limit ends a connection that reached its age (MaxAge) or its idle
// timeout: an error event the SDKs know (they reconnect), then a normal
// closure.
func (k *Conn) limit(ctx context.Context, what string) {
	e := apierr.New(apierr.CodeWebSocketLimit,
		"Responses websocket connection limit reached ("+what+"). Create a new websocket connection to continue.")
	w := k.writer(ctx, nil)
	w.Error(e)
	k.c.Close(CloseAgeLimit, apierr.CodeWebSocketLimit)
}

// turn runs one client event to its end, on a Writer that reuses spare's
// buffers, and returns the Writer for the lane's next turn: it keeps no
// buffer larger than spareMax, so a large turn's buffers are released when
// it ends.
func (k *Conn) turn(ctx context.Context, ev event, spare *Writer) (next *Writer) {
	w := k.writer(ctx, spare)
	defer func() { w.shed() }()
	if ev.refused != nil {
		if validStreamID(ev.lane) {
			w.stream = ev.lane
		}
		w.Error(ev.refused)
		return w
	}
	t, e := parse(ev.msg, k.cache)
	ev.msg = nil
	if e != nil {
		if validStreamID(ev.lane) {
			w.stream = ev.lane
		}
		w.Error(e)
		return w
	}
	w.stream = t.stream
	if t.steer != nil {
		w.Send(t.steer)
		return w
	}
	w.prevID = t.local
	// The outcome matters to the cache when the turn may be remembered or
	// may evict what it continued.
	w.keep = !t.store || !t.generate || t.local != ""
	if !t.generate {
		k.prewarm(ctx, t, w)
		return w
	}
	r := Request{Body: t.body}
	if t.from != nil {
		r.SessionID, r.ThreadID = t.from.sessionID, t.from.threadID
	}
	if !t.store {
		r.Remember = func(object []byte, sessionID, threadID string) { t.keep(k.cache, object, sessionID, threadID) }
	}
	w.whole = t.whole
	e = k.cfg.Turn(ctx, r, w)
	w.End()
	if e != nil && ctx.Err() == nil {
		k.bound(w)
		w.Error(e)
	}
	if ctx.Err() != nil {
		return w // the client is gone: nothing to remember
	}
	if e != nil || !completed(w.Terminal()) {
		t.forget(k.cache)
	}
	return w
}

// prewarm answers a generate:false turn (see prewarm.go).
func (k *Conn) prewarm(ctx context.Context, t *turn, w *Writer) {
	if e := k.cfg.Admit(ctx); e != nil {
		w.Error(e)
		return
	}
	if m := modelOf(t.body); m != k.cfg.Model {
		w.Error(apierr.Param(apierr.CodeModelNotFound, "model", "the model "+quote(m)+" does not exist; this service serves "+quote(k.cfg.Model)))
		return
	}
	created, done := prewarm(t.body, k.cfg.Model)
	if w.Send(w.patch(created)) != nil || w.Send(w.patch(done)) != nil {
		return
	}
	t.remember(k.cache, w.Terminal(), "", "", false)
}

// writer is a Writer for one turn, its writes bounded until the chain
// sets its own deadline.
func (k *Conn) writer(ctx context.Context, spare *Writer) *Writer {
	w := NewWriter(ctx, k.c, k.cork)
	if spare != nil {
		w.reuse(spare)
	}
	w.stalled = k.onStall
	w.gone = k.onGone
	k.bound(w)
	return w
}

// bound sets w's write deadline to WriteTimeout from now.
func (k *Conn) bound(w *Writer) {
	d := k.cfg.WriteTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	w.SetWriteDeadline(time.Now().Add(d))
}

// drainNow tells the connection to end after the turn in flight.
func (k *Conn) drainNow() {
	select {
	case <-k.drain:
	default:
		close(k.drain)
	}
}
