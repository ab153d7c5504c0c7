package server

import (
	"fmt"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/httproute"
)

// buildAPI builds g's chains of runedge's own APIs (host/api): the model
// list, the native run API, stored responses and conversations, each
// behind the auth stage a (and a body stage where the operation reads a
// body), on the handlers of this generation.
func (s *Server) buildAPI(g *generation, a *auth.Auth, cfg *config.Config) (err error) {
	hs := &api.Handlers{Runs: s.runs, Replays: &s.replays, MaxReplaysPerTenant: cfg.Limits.History.MaxReplaysPerTenant,
		ProviderKind: cfg.Provider.Kind, Media: cfg.Media.Policy(),
		// A stored response without its final object is rebuilt by this
		// generation's Responses result mapping plugin.
		Result: g.stages[config.ChainResponses+"/"+StageTranslate].p}
	body := func() filters.Stage { return bodystage.Setup(cfg.Limits.Config) }
	g.chains[filters.Models] = builtin.Authenticated(a, filters.HandlerFunc(api.Models))
	g.native[httproute.ListRuns] = builtin.Authenticated(a, filters.HandlerFunc(hs.ListRuns))
	if g.native[httproute.StartRun], err = builtin.NativeRun(builtin.Deps{Auth: a, Runner: s.runs,
		Body:   bodystage.Setup(cfg.Limits.Config),
		Tracer: s.tracing.Tracer()}, hs.StartRun(cfg.Limits.KeepaliveInterval())); err != nil {
		return fmt.Errorf("native run chain: %w", err)
	}
	g.native[httproute.GetRun] = builtin.Authenticated(a, filters.HandlerFunc(hs.GetRun))
	g.native[httproute.CancelRun] = builtin.Authenticated(a, filters.HandlerFunc(hs.CancelRun), body())
	g.native[httproute.RunEvents] = builtin.Authenticated(a, filters.HandlerFunc(hs.RunEvents))
	g.native[httproute.Usage] = builtin.Authenticated(a, filters.HandlerFunc(hs.Usage))
	// Its GET body ({"stream":true}, openai-go) is read under the body
	// deadline, and small.
	getBody := bodystage.New(4<<10, cfg.Limits.ReadBodyTimeout.Std()).WithGET()
	g.native[httproute.GetResponse] = builtin.Authenticated(a, filters.HandlerFunc(hs.GetResponse), getBody)
	g.native[httproute.DeleteResponse] = builtin.Authenticated(a, filters.HandlerFunc(hs.DeleteResponse))
	g.native[httproute.CancelResponse] = builtin.Authenticated(a, filters.HandlerFunc(hs.CancelResponse))
	g.native[httproute.ListInputItems] = builtin.Authenticated(a, filters.HandlerFunc(hs.ListInputItems))
	if g.native[httproute.InputTokens], err = hs.InputTokensChain(a, body(), g.stages[config.ChainResponses+"/"+StageMapRequest].p); err != nil {
		return fmt.Errorf("chains.responses: %w", err)
	}
	convBody := body()
	for op, h := range map[httproute.Op]filters.HandlerFunc{
		httproute.CreateConversation: hs.CreateConversation, httproute.UpdateConversation: hs.UpdateConversation,
		httproute.AddConversationItems: hs.AddConversationItems,
	} {
		g.native[op] = builtin.Authenticated(a, h, convBody)
	}
	for op, h := range map[httproute.Op]filters.HandlerFunc{
		httproute.GetConversation: hs.GetConversation, httproute.DeleteConversation: hs.DeleteConversation,
		httproute.ListConversationItems: hs.ListConversationItems, httproute.GetConversationItem: hs.GetConversationItem,
		httproute.DeleteConversationItem: hs.DeleteConversationItem,
	} {
		g.native[op] = builtin.Authenticated(a, h)
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
