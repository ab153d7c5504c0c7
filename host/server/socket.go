package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/turn"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/host/server/internal/socket"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/runner"
)

// The WebSocket mode of /v1/responses (host/server/internal/socket): GET
// upgraded carries many turns, each run by the POST chain of /v1/responses
// on the generation current when it starts, each its own run.

// methodSocket labels a socket turn in the metrics and the access log, and
// names its span: "WEBSOCKET /v1/responses".
const methodSocket = "WEBSOCKET"

// upgradable sends a GET that asks for a WebSocket to socket; every other
// request, a plain GET included (405 with Allow), goes to next.
func upgradable(socket http.HandlerFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && headerHasToken(r.Header, "Upgrade", "websocket") {
			socket(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// socket authenticates the upgrade with the auth stage (so a refusal is
// the usual JSON 401/403/429, before any upgrade), then serves the socket
// until it ends.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	x := &filters.Exchange{Endpoint: filters.Responses, Request: r, Reply: filters.NewReply(w, filters.Responses)}
	err := s.admit(r.Context(), x)
	telemetry.Note(w, x)
	if err != nil {
		s.fail(x, err)
		return
	}
	if s.sockets.Draining() {
		s.fail(x, apierr.Unavailable("the server is shutting down", 1, nil))
		return
	}
	if e := handshakeError(r); e != nil {
		w.Header().Set("Sec-WebSocket-Version", "13")
		s.fail(x, e) // as JSON, where the library would answer in plain text
		return
	}
	g := s.acquire()
	cfg, maxBody := g.cfg, g.maxBody
	s.release(g)
	ws := cfg.WebSocket
	var caps socket.Caps
	caps.Host, caps.Tenant, caps.Token = ws.Caps()
	leave, e := s.sockets.Enter(x.Identity.TenantID, x.Identity.Token, caps)
	if e != nil {
		s.fail(x, e) // before the upgrade: 429 or 503 with Retry-After
		return
	}
	defer leave()
	// Counted before the 101 goes out: a client that reads the gauge once
	// its upgrade is answered finds its socket there.
	defer s.metrics.SocketOpened(x.Identity.TenantID)()
	c, cork, err := socket.Accept(w, r)
	if err != nil {
		return // Accept answered the client
	}
	if rec, ok := w.(*telemetry.Recorder); ok {
		rec.Status = http.StatusSwitchingProtocols // not informational to the metrics: the reply
	}
	c.SetReadLimit(maxBody)
	k := socket.New(c, cork, socket.Config{
		MaxAge: ws.Age(), IdleTimeout: ws.Idle(), PingInterval: ws.Ping(),
		MaxCached: ws.Cached(), MaxBytes: ws.SocketBytes(maxBody),
		WriteTimeout: cfg.Limits.WriteTimeout.Std(),
		Model:        contract.ModelID,
		Turn:         s.socketTurn(r),
		Admit:        s.socketAdmit(r),
	})
	if !s.sockets.Serve(r.Context(), k) {
		c.Close(socket.CloseShutdown, "server shutting down")
	}
}

// handshakeError checks what the upgrade needs beyond "Upgrade: websocket"
// (RFC 6455 §4.2.1); a version other than 13 is refused with the header
// naming the one supported (§4.2.2).
func handshakeError(r *http.Request) *apierr.Error {
	switch {
	case !headerHasToken(r.Header, "Connection", "upgrade"):
		return apierr.InvalidHeader("Connection", "a WebSocket upgrade needs Connection: Upgrade")
	case r.Header.Get("Sec-WebSocket-Key") == "":
		return apierr.InvalidHeader("Sec-WebSocket-Key", "a WebSocket upgrade needs Sec-WebSocket-Key")
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return apierr.InvalidHeader("Sec-WebSocket-Version", "WebSocket version 13 is the one supported")
	}
	return nil
}

// socketTurn runs the turns of the socket opened by up: each through the
// /v1/responses chain as a POST would, counted, logged and traced like
// one (method WEBSOCKET).
func (s *Server) socketTurn(up *http.Request) func(context.Context, socket.Request, *socket.Writer) *apierr.Error {
	return func(ctx context.Context, t socket.Request, w *socket.Writer) *apierr.Error {
		start := time.Now()
		r := up.WithContext(ctx)
		r.Method = methodSocket
		if t.SessionID != "" {
			r.Header = up.Header.Clone()
			r.Header.Set(filters.HeaderSessionID, t.SessionID)
			r.Header.Set(filters.HeaderThreadID, t.ThreadID)
		}
		rec := &telemetry.Recorder{ResponseWriter: w}
		var span trace.Span
		if s.tracing != nil {
			r, span = s.tracing.StartRequest(rec, r)
		}
		g := s.acquire()
		defer s.release(g)
		x := &filters.Exchange{Endpoint: filters.Responses, Request: r, Body: t.Body, Reply: filters.NewReply(rec, filters.Responses)}
		if keep := t.Remember; keep != nil {
			// The turn's commit lets the socket remember it (filters/turn).
			x.Turn = &turn.Turn{Remember: func(run runner.Run, object []byte) { keep(object, run.SessionID, run.ThreadID) }}
		}
		x.Reply.SetWriteTimeout(g.cfg.Limits.WriteTimeout.Std())
		err := g.chains[filters.Responses].Handle(r.Context(), x)
		var e *apierr.Error
		if err != nil {
			if e = s.failure(x, err); e != nil {
				rec.Status = e.Status
			}
		}
		if rec.Status == 0 {
			rec.Status = http.StatusOK
		}
		telemetry.Note(rec, x)
		if span != nil {
			telemetry.Annotate(r.Context(), x, err)
			telemetry.EndRequest(span, r, rec.Status)
		}
		end := time.Now()
		d := end.Sub(start)
		s.metrics.Request(httproute.LabelResponses, methodSocket, rec.Status, rec.Tenant, d)
		telemetry.AccessLog(s.log, r, rec, httproute.LabelResponses, end, d)
		return e
	}
}

// socketAdmit runs the auth stage for a turn that runs no chain (a
// pre-warm), so that it counts against the rate limits like any turn.
func (s *Server) socketAdmit(up *http.Request) func(context.Context) *apierr.Error {
	return func(ctx context.Context) *apierr.Error {
		if err := s.admit(ctx, &filters.Exchange{Endpoint: filters.Responses, Request: up.WithContext(ctx)}); err != nil {
			return apierr.From(err)
		}
		return nil
	}
}

// admit runs the auth stage alone on x (token, tenant, actor, rate limit)
// on the current generation.
func (s *Server) admit(ctx context.Context, x *filters.Exchange) error {
	g := s.acquire()
	defer s.release(g)
	return g.auth.Handle(ctx, x, filters.HandlerFunc(func(context.Context, *filters.Exchange) error { return nil }))
}
