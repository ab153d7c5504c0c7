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

// handlerOf returns the handler of an operation of the route table, nil
// for one it does not know.
func (s *Server) handlerOf(op httproute.Op) http.HandlerFunc {
	switch op {
	case httproute.Models:
		return s.chain(filters.Models)
	case httproute.ChatCompletions:
		return s.chain(filters.ChatCompletions)
	case httproute.Responses:
		return s.chain(filters.Responses)
	case httproute.ResponsesSocket:
		return s.socket
	case httproute.CompactResponse:
		return s.compactChain
	case httproute.ListRuns, httproute.StartRun, httproute.GetRun, httproute.CancelRun, httproute.RunEvents, httproute.Usage:
		return s.nativeChain(op)
	case httproute.GetResponse, httproute.DeleteResponse, httproute.ListInputItems, httproute.CancelResponse,
		httproute.InputTokens:
		return s.responsesOp(op)
	case httproute.CreateConversation, httproute.GetConversation, httproute.UpdateConversation, httproute.DeleteConversation,
		httproute.AddConversationItems, httproute.ListConversationItems, httproute.GetConversationItem, httproute.DeleteConversationItem:
		return s.responsesOp(op)
	case httproute.Health:
		return s.health
	}
	return nil
}

// chain serves a compatible endpoint through its chain on the current
// generation.
func (s *Server) chain(ep filters.Endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		defer s.release(g)
		s.serve(w, r, ep, g, g.chains[ep])
	}
}

// compactChain serves POST /v1/responses/compact: a Responses request (as
// the mapping and the error shape see it) through the compact chain.
func (s *Server) compactChain(w http.ResponseWriter, r *http.Request) {
	g := s.acquire()
	defer s.release(g)
	s.serve(w, r, filters.Responses, g, g.chains[filters.ResponsesCompact])
}

func (s *Server) nativeChain(op httproute.Op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		defer s.release(g)
		s.serve(w, r, filters.Native, g, g.native[op])
	}
}

// responsesOp serves an operation on stored responses (GET, DELETE,
// input_items, cancel); errors render as on /v1/responses.
func (s *Server) responsesOp(op httproute.Op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		defer s.release(g)
		s.serve(w, r, filters.Responses, g, g.native[op])
	}
}

// serve runs h for one request. The body is read by the chain's body
// stage, after auth (filters/body).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ep filters.Endpoint, g *generation, h filters.Handler) {
	x := &filters.Exchange{Endpoint: ep, Request: r, Reply: filters.NewReply(w, ep)}
	x.Reply.SetWriteTimeout(g.cfg.Limits.WriteTimeout.Std())
	err := h.Handle(r.Context(), x)
	if err != nil {
		s.fail(x, err)
	}
	if s.tracing != nil {
		telemetry.Annotate(r.Context(), x, err)
	}
	telemetry.Note(w, x)
}
