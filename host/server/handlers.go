package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/httproute"
)

// operation is what serves one operation of the route table: exactly one
// of chain, handler, build and direct is set.
type operation struct {
	// errors is the endpoint whose error shape the operation's replies take
	// (unused by direct, which renders its own).
	errors filters.Endpoint
	// chain names a compatible chain of the generation (built from
	// chains.* with its mapping plugins, generation.go).
	chain filters.Endpoint
	// handler is a terminal handler of runedge's own APIs (host/api), run
	// behind the auth stage and the body stage body says.
	handler func(*api.Handlers, context.Context, *filters.Exchange) error
	body    bodyRead
	// build builds an API chain that is more than auth, body and a handler.
	build func(apiDeps) (filters.Handler, error)
	// direct serves the operation outside any generation's chain.
	direct func(*Server, http.ResponseWriter, *http.Request)
}

// bodyRead is how an API operation reads its body.
type bodyRead int

const (
	noBody   bodyRead = iota
	readBody          // limits.max_body_bytes under limits.read_body_timeout
	// getBody reads a GET's small body ({"stream":true}, openai-go) under
	// the body deadline.
	getBody
)

// operations binds every operation of the route table (internal/httproute)
// to what serves it: the one place a route's handler is named. The router
// and the route tests walk it, so a new route is a row there and one here.
var operations = map[httproute.Op]operation{
	httproute.Models:          {errors: filters.Models, handler: models},
	httproute.ChatCompletions: {errors: filters.ChatCompletions, chain: filters.ChatCompletions},
	httproute.Responses:       {errors: filters.Responses, chain: filters.Responses},
	// Compaction's request is a Responses request, as the mapping and the
	// error shape see it, through the compact chain.
	httproute.CompactResponse: {errors: filters.Responses, chain: filters.ResponsesCompact},
	httproute.ResponsesSocket: {direct: (*Server).socket},
	httproute.Health:          {direct: (*Server).health},

	httproute.ListRuns:  {errors: filters.Native, handler: (*api.Handlers).ListRuns},
	httproute.StartRun:  {errors: filters.Native, build: startRun},
	httproute.GetRun:    {errors: filters.Native, handler: (*api.Handlers).GetRun},
	httproute.CancelRun: {errors: filters.Native, handler: (*api.Handlers).CancelRun, body: readBody},
	httproute.RunEvents: {errors: filters.Native, handler: (*api.Handlers).RunEvents},
	httproute.Usage:     {errors: filters.Native, handler: (*api.Handlers).Usage},

	httproute.GetResponse:    {errors: filters.Responses, handler: (*api.Handlers).GetResponse, body: getBody},
	httproute.DeleteResponse: {errors: filters.Responses, handler: (*api.Handlers).DeleteResponse},
	httproute.CancelResponse: {errors: filters.Responses, handler: (*api.Handlers).CancelResponse},
	httproute.ListInputItems: {errors: filters.Responses, handler: (*api.Handlers).ListInputItems},
	httproute.InputTokens:    {errors: filters.Responses, build: inputTokens},

	httproute.CreateConversation:     {errors: filters.Responses, handler: (*api.Handlers).CreateConversation, body: readBody},
	httproute.GetConversation:        {errors: filters.Responses, handler: (*api.Handlers).GetConversation},
	httproute.UpdateConversation:     {errors: filters.Responses, handler: (*api.Handlers).UpdateConversation, body: readBody},
	httproute.DeleteConversation:     {errors: filters.Responses, handler: (*api.Handlers).DeleteConversation},
	httproute.AddConversationItems:   {errors: filters.Responses, handler: (*api.Handlers).AddConversationItems, body: readBody},
	httproute.ListConversationItems:  {errors: filters.Responses, handler: (*api.Handlers).ListConversationItems},
	httproute.GetConversationItem:    {errors: filters.Responses, handler: (*api.Handlers).GetConversationItem},
	httproute.DeleteConversationItem: {errors: filters.Responses, handler: (*api.Handlers).DeleteConversationItem},
}

func models(_ *api.Handlers, ctx context.Context, x *filters.Exchange) error {
	return api.Models(ctx, x)
}

// apiDeps is what an API chain is built from.
type apiDeps struct {
	s    *Server
	g    *generation
	hs   *api.Handlers
	auth *auth.Auth
	cfg  *config.Config
}

func startRun(d apiDeps) (filters.Handler, error) {
	h, err := builtin.NativeRun(builtin.Deps{Auth: d.auth, Runner: d.s.runs,
		Body:   bodystage.Setup(d.cfg.Limits.Config, d.s.bodies),
		Tracer: d.s.tracing.Tracer()}, d.hs.StartRun(d.cfg.Limits.KeepaliveInterval()))
	if err != nil {
		return nil, fmt.Errorf("native run chain: %w", err)
	}
	return h, nil
}

func inputTokens(d apiDeps) (filters.Handler, error) {
	h, err := d.hs.InputTokensChain(d.auth, bodystage.Setup(d.cfg.Limits.Config, d.s.bodies), d.g.stages[config.ChainResponses+"/"+StageMapRequest].p)
	if err != nil {
		return nil, fmt.Errorf("chains.responses: %w", err)
	}
	return h, nil
}

// buildAPI builds g's chains of runedge's own APIs (host/api), the rows of
// operations with a handler or a build: the model list, the native run
// API, stored responses and conversations, each behind the auth stage a
// (and a body stage where the operation reads a body), on the handlers of
// this generation.
func (s *Server) buildAPI(g *generation, a *auth.Auth, cfg *config.Config) error {
	hs := &api.Handlers{Runs: s.runs, Replays: &s.replays, MaxReplaysPerTenant: cfg.Limits.History.MaxReplaysPerTenant,
		ProviderKind: cfg.Provider.Kind, Media: cfg.Media.Policy(),
		// A stored response without its final object is rebuilt by this
		// generation's Responses result mapping plugin.
		Result: g.stages[config.ChainResponses+"/"+StageTranslate].p}
	d := apiDeps{s: s, g: g, hs: hs, auth: a, cfg: cfg}
	for op, o := range operations {
		switch {
		case o.build != nil:
			h, err := o.build(d)
			if err != nil {
				return err
			}
			g.api[op] = h
		case o.handler != nil:
			var between []filters.Stage
			switch o.body {
			case readBody:
				between = append(between, bodystage.Setup(cfg.Limits.Config, s.bodies))
			case getBody:
				between = append(between, bodystage.New(4<<10, cfg.Limits.ReadBodyTimeout.Std()).WithGET())
			}
			f := o.handler
			g.api[op] = builtin.Authenticated(a, filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
				return f(hs, ctx, x)
			}), between...)
		}
	}
	return nil
}

// responsesResult is the Responses result mapping plugin of the generation
// serving now, nil before the first is installed.
func (s *Server) responsesResult() filters.Mapper {
	g := s.gen.Load()
	if g == nil {
		return nil
	}
	if st := g.stages[config.ChainResponses+"/"+StageTranslate]; st != nil && st.p != nil {
		return st.p
	}
	return nil
}
