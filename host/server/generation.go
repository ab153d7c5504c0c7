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
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/telemetry"
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
	// api holds the chains of runedge's own APIs, by operation (the rows
	// of operations with a handler or a build).
	api map[httproute.Op]filters.Handler
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
	g := &generation{cfg: cfg, chains: map[filters.Endpoint]filters.Handler{}, api: map[httproute.Op]filters.Handler{},
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
		d.Body = bodystage.Setup(cfg.Limits.Config, s.bodies)
		d.SSEKeepalive = cfg.Limits.KeepaliveInterval()
		d.Tracer = s.tracing.Tracer()
		d.Hold = hold
		d.Compaction = keys
		d.InputTokens = api.InputTokenCounter(cfg)
		d.Hosted = s.metrics.Hosted(cfg)
		d.Media = cfg.Media.Policy()
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
	if err := s.buildAPI(g, a, cfg); err != nil {
		return nil, err
	}
	g.fresh = loader.fresh > 0
	return g, nil
}

// newAuth builds the auth stage on the server's rate limits, which outlive
// the generation (install applies the generation's figures).
func newAuth(cfg *config.Config, limits *auth.Limits) (*auth.Auth, error) {
	tokens := make([]auth.Token, 0, len(cfg.Tokens))
	for i, t := range cfg.Tokens {
		h, err := auth.ParseHash(t.Hash)
		if err != nil {
			return nil, fmt.Errorf("tokens[%d].hash: %w", i, err)
		}
		tokens = append(tokens, auth.Token{Name: t.Name, Hash: h, Tenant: t.Tenant, Admin: t.Admin})
	}
	return auth.Setup(cfg.Actors, tokens, limits)
}

// newAgent builds the reference agent on the configured provider; with a
// tracer, each provider call is a span (traceProvider). release lets go
// of what the provider keeps between calls (the openai provider's idle
// upstream connections, after a burst), for a quiet host; nil when it
// keeps nothing.
func newAgent(cfg *config.Config, tracer trace.Tracer) (_ runner.Agent, release func() bool, _ error) {
	switch cfg.Provider.Kind {
	case "offline":
		p := offline.New(offline.Config{TokenDelay: cfg.Provider.Offline.TokenDelay.Std()})
		return agent.New(telemetry.TraceProvider(p, tracer, "runedge.offline", "offline")), nil, nil
	case config.ProviderOpenAI:
		p, err := newOpenAI(cfg.Provider.OpenAI)
		if err != nil {
			return nil, nil, err
		}
		return agent.New(telemetry.TraceProvider(p, tracer, "openai", cfg.Provider.OpenAI.Model)), p.Release, nil
	}
	return nil, nil, fmt.Errorf("provider.kind: unknown provider %q", cfg.Provider.Kind)
}
