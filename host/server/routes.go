package server

import (
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/host/internal/httpmux"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/internal/httproute"
)

// routes serves the route table (internal/httproute). Routing comes before
// auth: an unknown path is a 404 and a wrong method a 405 with Allow, both
// as JSON, for anyone.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range httproute.Table {
		m := httpmux.Methods{}
		for _, rm := range rt.Methods {
			h := s.handlerOf(rm.Op)
			if h == nil {
				panic("host/server: no handler for operation " + string(rm.Op) + " of route " + rt.Pattern)
			}
			if rm.Method == httproute.AnyMethod {
				mux.HandleFunc(rt.Pattern, h)
				continue
			}
			m[rm.Method] = h
		}
		if len(m) > 0 {
			var h http.Handler = m
			if rt.Upgrade != "" {
				h = upgradable(s.handlerOf(rt.Upgrade), m)
			}
			mux.Handle(rt.Pattern, h)
		}
	}
	mux.HandleFunc("/", httpmux.NotFound)
	return mux
}

// handlerOf returns the handler of an operation of the route table, as
// operations binds it; nil for one it does not know.
func (s *Server) handlerOf(op httproute.Op) http.HandlerFunc {
	o, ok := operations[op]
	if !ok {
		return nil
	}
	if o.direct != nil {
		return func(w http.ResponseWriter, r *http.Request) { o.direct(s, w, r) }
	}
	if o.chain != "" {
		return func(w http.ResponseWriter, r *http.Request) {
			g := s.acquire()
			defer s.release(g)
			s.serve(w, r, o.errors, g, g.chains[o.chain])
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		defer s.release(g)
		s.serve(w, r, o.errors, g, g.api[op])
	}
}

// serve runs h for one request. The body is read by the chain's body
// stage, after auth (filters/body).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ep filters.Endpoint, g *generation, h filters.Handler) {
	x := &filters.Exchange{Endpoint: ep, Request: r, Reply: filters.NewReply(w, ep)}
	x.Reply.SetWriteTimeout(g.cfg.Limits.WriteTimeout.Std())
	// HTTP/1.1 only: its stream is chunked, so net/http's end of the
	// response is always one more write, which carries what a hold the
	// handler left kept; an HTTP/1.0 stream ends by closing, with no
	// write to carry it.
	if hc, ok := r.Context().Value(holdKey{}).(*holdConn); ok && r.ProtoMajor == 1 && r.ProtoMinor >= 1 {
		x.Reply.SetHolder(hc)
		defer hc.releaseNext()
	}
	err := h.Handle(r.Context(), x)
	if err != nil {
		s.fail(x, err)
	}
	if s.tracing != nil {
		telemetry.Annotate(r.Context(), x, err)
	}
	telemetry.Note(w, x)
}
