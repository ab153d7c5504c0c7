package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// generation is everything built from one configuration: the chains and the
// plugins they use. It is swapped as a whole (reload, live plugin swap); a
// request runs entirely on the generation it started with (acquire/release),
// so a reply is never produced by a mix of plugin versions. A retired
// generation releases its plugins once its last request is done.
type generation struct {
	cfg    *config.Config
	chains map[filters.Endpoint]filters.Handler
	// native holds the chains of the native run API, by operation.
	native map[httproute.Op]filters.Handler
	// stages maps a stage key ("chat.completions/translate") to its plugin.
	stages  map[string]*held
	auth    *auth.Auth
	maxBody int64
	// fresh says that building it loaded at least one plugin anew.
	fresh bool

	active  atomic.Int64
	retired atomic.Bool
	closed  sync.Once
}

// release drops the generation's hold on its plugins: each is closed when
// no generation holds it any more.
func (g *generation) close(ctx context.Context) {
	g.closed.Do(func() {
		seen := map[*held]bool{}
		for _, h := range g.stages {
			if !seen[h] {
				seen[h] = true
				h.drop(ctx)
			}
		}
	})
}

// build loads the plugins and builds every chain of cfg. On error nothing
// is left open, and the heap the loads used is given back.
func (s *Server) build(ctx context.Context, cfg *config.Config) (_ *generation, err error) {
	g := &generation{cfg: cfg, chains: map[filters.Endpoint]filters.Handler{}, native: map[httproute.Op]filters.Handler{},
		stages: map[string]*held{}, maxBody: cfg.Limits.MaxBodyBytes}
	var loader *loader
	defer func() {
		if err != nil {
			g.close(ctx)
			if loader != nil && loader.fresh > 0 {
				go returnHeap()
			}
		}
	}()
	a, err := newAuth(cfg, s.limits)
	if err != nil {
		return nil, err
	}
	g.auth = a
	loader = s.loader(ctx, cfg)
	// A background run keeps the generation (its plugins) until it ends.
	hold := func() func() {
		g.active.Add(1)
		return func() { s.release(g) }
	}
	keys, err := s.compactionKeys(cfg)
	if err != nil {
		return nil, err
	}
	for key, ep := range map[string]filters.Endpoint{config.ChainChat: filters.ChatCompletions, config.ChainResponses: filters.Responses} {
		ch := cfg.Chains[key]
		var d builtin.Deps
		d.Auth, d.Runner, d.StreamWindow = a, s.runs, cfg.Plugins.StreamWindow.Std()
		d.Body = bodystage.New(cfg.Limits.MaxBodyBytes, cfg.Limits.ReadBodyTimeout.Std())
		d.SSEKeepalive = cfg.Limits.KeepaliveInterval()
		d.Tracer = s.tracing.tracerOf()
		d.Hold = hold
		d.Compaction = keys
		d.InputTokens = inputTokenCounter(cfg)
		d.Hosted = s.metrics.hosted(cfg)
		for _, st := range []struct {
			stage string
			path  string
			dst   **runtime.Plugin
		}{{StageMapRequest, ch.MapRequest, &d.Plugins.Request}, {StageTranslate, ch.Translate, &d.Plugins.Result}} {
			h, err := loader.load(st.path)
			if err != nil {
				return nil, fmt.Errorf("chains.%s.%s: %w", key, strings.ReplaceAll(st.stage, "-", "_"), err)
			}
			g.stages[key+"/"+st.stage] = h
			*st.dst = h.p
		}
		if g.chains[ep], err = builtin.Chain(d); err != nil {
			return nil, fmt.Errorf("chains.%s: %w", key, err)
		}
		if ep == filters.Responses {
			// Compaction maps its body as a Responses request.
			if g.chains[filters.ResponsesCompact], err = builtin.CompactChain(d); err != nil {
				return nil, fmt.Errorf("chains.%s: %w", key, err)
			}
		}
	}
	g.chains[filters.Models] = builtin.Authenticated(a, filters.HandlerFunc(serveModels))
	g.native[httproute.ListRuns] = builtin.Authenticated(a, filters.HandlerFunc(s.listRuns))
	if g.native[httproute.StartRun], err = builtin.NativeRun(builtin.Deps{Auth: a, Runner: s.runs,
		Body:   bodystage.New(cfg.Limits.MaxBodyBytes, cfg.Limits.ReadBodyTimeout.Std()),
		Tracer: s.tracing.tracerOf()}, s.startRun(cfg.Limits.KeepaliveInterval())); err != nil {
		return nil, fmt.Errorf("native run chain: %w", err)
	}
	g.native[httproute.GetRun] = builtin.Authenticated(a, filters.HandlerFunc(s.getRun))
	g.native[httproute.CancelRun] = builtin.Authenticated(a, filters.HandlerFunc(s.cancelRun),
		bodystage.New(cfg.Limits.MaxBodyBytes, cfg.Limits.ReadBodyTimeout.Std()))
	g.native[httproute.RunEvents] = builtin.Authenticated(a, filters.HandlerFunc(s.runEventsOp))
	// A stored response without its final object is rebuilt by this
	// generation's Responses result mapping plugin.
	rp := g.stages[config.ChainResponses+"/"+StageTranslate].p
	withPlugin := func(op func(context.Context, *filters.Exchange, *runtime.Plugin) error) filters.Handler {
		return filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error { return op(ctx, x, rp) })
	}
	// Its GET body ({"stream":true}, openai-go) is read under the body
	// deadline, and small.
	getBody := bodystage.New(4<<10, cfg.Limits.ReadBodyTimeout.Std()).WithGET()
	g.native[httproute.GetResponse] = builtin.Authenticated(a, withPlugin(s.getResponse), getBody)
	g.native[httproute.DeleteResponse] = builtin.Authenticated(a, filters.HandlerFunc(s.deleteResponse))
	g.native[httproute.CancelResponse] = builtin.Authenticated(a, withPlugin(s.cancelResponse))
	g.native[httproute.ListInputItems] = builtin.Authenticated(a, filters.HandlerFunc(s.listInputItems))
	if g.native[httproute.InputTokens], err = s.inputTokensChain(a, cfg, g.stages[config.ChainResponses+"/"+StageMapRequest].p); err != nil {
		return nil, fmt.Errorf("chains.responses: %w", err)
	}
	convBody := bodystage.New(cfg.Limits.MaxBodyBytes, cfg.Limits.ReadBodyTimeout.Std())
	for op, h := range map[httproute.Op]func(context.Context, *filters.Exchange) error{
		httproute.CreateConversation: s.createConversation, httproute.UpdateConversation: s.updateConversation,
		httproute.AddConversationItems: s.addConversationItems,
	} {
		g.native[op] = builtin.Authenticated(a, filters.HandlerFunc(h), convBody)
	}
	for op, h := range map[httproute.Op]func(context.Context, *filters.Exchange) error{
		httproute.GetConversation: s.getConversation, httproute.DeleteConversation: s.deleteConversation,
		httproute.ListConversationItems: s.listConversationItems, httproute.GetConversationItem: s.getConversationItem,
		httproute.DeleteConversationItem: s.deleteConversationItem,
	} {
		g.native[op] = builtin.Authenticated(a, filters.HandlerFunc(h))
	}
	g.fresh = loader.fresh > 0
	return g, nil
}

// newAuth builds the auth stage on the server's rate limits, which outlive
// the generation (install applies the generation's figures).
func newAuth(cfg *config.Config, limits *auth.Limits) (*auth.Auth, error) {
	ac := auth.Config{
		ActorPolicy:   auth.ActorPolicy(cfg.Actors.Missing),
		DefaultTenant: cfg.Actors.DefaultTenant,
		Limits:        limits,
	}
	for i, t := range cfg.Tokens {
		h, err := auth.ParseHash(t.Hash)
		if err != nil {
			return nil, fmt.Errorf("tokens[%d].hash: %w", i, err)
		}
		ac.Tokens = append(ac.Tokens, auth.Token{Name: t.Name, Hash: h, Tenant: t.Tenant, Admin: t.Admin})
	}
	return auth.New(ac)
}

// newAgent builds the reference agent on the configured provider; with a
// tracer, each provider call is a span (traceProvider).
func newAgent(cfg *config.Config, tracer trace.Tracer) (runner.Agent, error) {
	switch cfg.Provider.Kind {
	case "offline":
		p := offline.New(offline.Config{TokenDelay: cfg.Provider.Offline.TokenDelay.Std()})
		return agent.New(traceProvider(p, tracer, "runedge.offline", "offline")), nil
	case config.ProviderOpenAI:
		p, err := newOpenAI(cfg.Provider.OpenAI)
		if err != nil {
			return nil, err
		}
		return agent.New(traceProvider(p, tracer, "openai", cfg.Provider.OpenAI.Model)), nil
	}
	return nil, fmt.Errorf("provider.kind: unknown provider %q", cfg.Provider.Kind)
}

// rates are the rate limit figures of cfg: per token, and per tenant
// (limits.tenant_*, else the token's figures).
func rates(cfg *config.Config) (token, tenant auth.Rate) {
	l := cfg.Limits
	token = auth.Rate{PerSecond: l.RatePerSecond, Burst: l.Burst}
	tenant = token
	if l.TenantRatePerSecond > 0 {
		tenant = auth.Rate{PerSecond: l.TenantRatePerSecond, Burst: l.TenantBurst}
	}
	return token, tenant
}
