// Package socket is the WebSocket mode of /v1/responses: one connection,
// many turns. Each response.create runs as a POST /v1/responses would (the
// host runs the chain, see Config.Turn); this package owns what is the
// socket's own: reading client events in order, one turn at a time, the
// connection-local state of store:false responses (Cache), pre-warms,
// error events, pings, the connection's age limit and its close codes.
package socket

import (
	"context"
	"time"

	"github.com/coder/websocket"

	"github.com/runedge/runedge/filters/apierr"
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
}

// Config is what a connection needs from its host.
type Config struct {
	// MaxAge ends the connection (0: never).
	MaxAge time.Duration
	// PingInterval is how often an idle connection is pinged; a ping not
	// answered within it closes the connection (0: no pings).
	PingInterval time.Duration
	// MaxCached and MaxCachedBytes bound the connection-local state.
	MaxCached, MaxCachedBytes int
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
	// spare is what the turns' Writers reuse, one turn at a time: their
	// buffers and header map.
	spare *Writer
}

// New wraps an accepted socket.
func New(c *websocket.Conn, cork *Cork, cfg Config) *Conn {
	return &Conn{c: c, cork: cork, cfg: cfg, cache: NewCache(cfg.MaxCached, cfg.MaxCachedBytes), drain: make(chan struct{})}
}

// Serve reads client events and runs them as turns, in order, until the
// client closes, the connection reaches its age, or the hub drains it.
// Closing the socket cancels the turn in flight (its run is recorded
// cancelled, client_disconnect).
func (k *Conn) Serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer k.c.CloseNow()
	events := make(chan []byte, 8)
	go k.read(ctx, cancel, events)
	if k.cfg.PingInterval > 0 {
		go k.ping(ctx)
	}
	// The age limit and a drain end the socket; either wins over a
	// waiting event: no turn starts after it.
	end := make(chan func(context.Context), 1)
	go k.ending(ctx, end)
	for {
		select {
		case f := <-end:
			f(ctx)
			return
		default:
		}
		select {
		case msg, ok := <-events:
			if !ok {
				return
			}
			k.turn(ctx, msg)
		case f := <-end:
			f(ctx)
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
		end <- k.ageLimit
	case <-k.drain:
		end <- func(context.Context) { k.c.Close(CloseShutdown, "server shutting down") }
	case <-ctx.Done():
	}
}

// read passes text messages to the turn loop, in order; it keeps reading
// during a turn, so control frames (ping, pong, close) are answered and a
// close cancels the turn (cancel). A binary message closes the socket.
func (k *Conn) read(ctx context.Context, cancel context.CancelFunc, events chan<- []byte) {
	defer close(events)
	defer cancel()
	for {
		typ, msg, err := k.c.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			k.c.Close(CloseBinary, "client events are JSON text messages")
			return
		}
		select {
		case events <- msg:
		case <-ctx.Done():
			return
		}
	}
}

// ping keeps an idle connection alive through load balancers and finds a
// peer that went away without closing.
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
			k.c.CloseNow()
			return
		}
	}
}

// ageLimit ends a connection that reached MaxAge: an error event the SDKs
// know (they reconnect), then a normal closure.
func (k *Conn) ageLimit(ctx context.Context) {
	e := apierr.New(apierr.CodeWebSocketLimit, "Responses websocket connection limit reached ("+k.cfg.MaxAge.String()+"). Create a new websocket connection to continue.")
	w := k.writer(ctx)
	w.Error(e)
	k.c.Close(CloseAgeLimit, apierr.CodeWebSocketLimit)
}

// turn runs one client event to its end.
func (k *Conn) turn(ctx context.Context, msg []byte) {
	w := k.writer(ctx)
	defer func() { k.spare = w }()
	t, e := parse(msg, k.cache)
	if e != nil {
		w.Error(e)
		return
	}
	w.prevID = t.local
	// The outcome matters to the cache when the turn may be remembered or
	// may evict what it continued.
	w.keep = !t.store || !t.generate || t.local != ""
	if !t.generate {
		k.prewarm(ctx, t, w)
		return
	}
	r := Request{Body: t.body}
	if t.from != nil {
		r.SessionID, r.ThreadID = t.from.sessionID, t.from.threadID
	}
	w.whole = t.whole
	e = k.cfg.Turn(ctx, r, w)
	w.End()
	if e != nil && ctx.Err() == nil {
		k.bound(w)
		w.Error(e)
	}
	if ctx.Err() != nil {
		return // the client is gone: nothing to remember
	}
	failed := e != nil || !completed(w.Terminal())
	t.remember(k.cache, w.Terminal(), w.Header().Get(headerSessionID), w.Header().Get(headerThreadID), failed)
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
func (k *Conn) writer(ctx context.Context) *Writer {
	w := NewWriter(ctx, k.c, k.cork)
	if p := k.spare; p != nil {
		k.spare = nil
		w.reuse(p)
	}
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
