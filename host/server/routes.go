package server

import (
	"net/http"
	"sort"
	"strings"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
)

// routes maps paths to handlers. Routing comes before auth: an unknown path
// is a 404 and a wrong method a 405 with Allow, both as JSON, for anyone.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/models", methods{http.MethodGet: s.chain(filters.Models)})
	mux.Handle("/v1/models/{model}", methods{http.MethodGet: s.chain(filters.Models)})
	mux.Handle("/v1/chat/completions", methods{http.MethodPost: s.chain(filters.ChatCompletions)})
	mux.Handle("/v1/responses", methods{http.MethodPost: s.chain(filters.Responses)})
	mux.Handle("/runner/v1/runs", methods{http.MethodGet: s.nativeChain(listRuns)})
	mux.Handle("/runner/v1/runs/{id}", methods{http.MethodGet: s.nativeChain(getRun)})
	mux.Handle("/runner/v1/runs/{id}/cancel", methods{http.MethodPost: s.nativeChain(cancelRun)})
	mux.Handle("/runner/v1/runs/{id}/events", methods{http.MethodGet: s.nativeChain(runEvents)})
	mux.Handle("/v1/responses/{id}", methods{http.MethodGet: s.responsesOp(getResponse),
		http.MethodDelete: s.responsesOp(deleteResponse)})
	mux.Handle("/v1/responses/{id}/input_items", methods{http.MethodGet: s.responsesOp(listInputItems)})
	mux.Handle("/v1/responses/{id}/cancel", methods{http.MethodPost: s.responsesOp(cancelResponse)})
	mux.Handle("/v1/responses/input_tokens", methods{http.MethodPost: s.responsesOp(inputTokens)})
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("unknown path %s", r.URL.Path))
	})
	return mux
}

// methods dispatches on the request method; others get 405 with Allow.
type methods map[string]http.HandlerFunc

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := m[r.Method]; ok {
		h(w, r)
		return
	}
	allow := make([]string, 0, len(m))
	for k := range m {
		allow = append(allow, k)
	}
	sort.Strings(allow)
	e := apierr.New(http.StatusMethodNotAllowed, apierr.TypeInvalidRequest, apierr.CodeMethodNotAllowed,
		"method "+r.Method+" is not allowed on "+r.URL.Path+"; use "+strings.Join(allow, ", "))
	e.Allow = strings.Join(allow, ", ")
	writeError(w, e)
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

func (s *Server) nativeChain(op nativeOp) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		defer s.release(g)
		s.serve(w, r, filters.Native, g, g.native[op])
	}
}

// responsesOp serves an operation on stored responses (GET, DELETE,
// input_items, cancel); errors render as on /v1/responses.
func (s *Server) responsesOp(op nativeOp) http.HandlerFunc {
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
	// A background run keeps the generation (its plugins) until it ends.
	x.Hold = func() func() {
		g.active.Add(1)
		return func() { s.release(g) }
	}
	err := h.Handle(r.Context(), x)
	if err != nil {
		s.fail(x, err)
	}
	if s.tracing != nil {
		annotate(r.Context(), x, err)
	}
	note(w, x)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}`))
}
