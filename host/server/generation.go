package server

import (
	"context"
	"fmt"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// generation is everything built from one configuration: the chains and the
// plugins they use. It is swapped as a whole (reload, a later change); a
// request runs entirely on the generation it started with.
type generation struct {
	chains map[filters.Endpoint]filters.Handler
	// native holds the chains of the native run API, by operation.
	native  map[nativeOp]filters.Handler
	plugins []*runtime.Plugin
	maxBody int64
}

func (g *generation) close(ctx context.Context) {
	for _, p := range g.plugins {
		p.Close(ctx)
	}
}

// build loads the plugins and builds every chain of cfg. On error nothing
// is left open.
func (s *Server) build(ctx context.Context, cfg *config.Config) (_ *generation, err error) {
	g := &generation{chains: map[filters.Endpoint]filters.Handler{}, native: map[nativeOp]filters.Handler{},
		maxBody: cfg.Limits.MaxBodyBytes}
	defer func() {
		if err != nil {
			g.close(ctx)
		}
	}()
	a, err := newAuth(cfg)
	if err != nil {
		return nil, err
	}
	loaded := map[string]*runtime.Plugin{} // one instance pool per file
	load := func(path string) (*runtime.Plugin, error) {
		path = cfg.Path(path)
		if p := loaded[path]; p != nil {
			return p, nil
		}
		p, err := s.engine.Load(ctx, path, runtime.Options{PoolSize: cfg.Plugins.PoolSize,
			MaxMemoryPages: cfg.Plugins.MaxMemoryPages})
		if err != nil {
			return nil, fmt.Errorf("plugins: %w (build them with `make plugins`)", err)
		}
		loaded[path] = p
		g.plugins = append(g.plugins, p)
		return p, nil
	}
	for key, ep := range map[string]filters.Endpoint{config.ChainChat: filters.ChatCompletions, config.ChainResponses: filters.Responses} {
		ch := cfg.Chains[key]
		var d builtin.Deps
		d.Auth, d.Runner = a, s.runs
		if d.Plugins.Request, err = load(ch.MapRequest); err != nil {
			return nil, err
		}
		if d.Plugins.Result, err = load(ch.Translate); err != nil {
			return nil, err
		}
		if g.chains[ep], err = builtin.Chain(d); err != nil {
			return nil, fmt.Errorf("chains.%s: %w", key, err)
		}
	}
	g.chains[filters.Models] = builtin.Authenticated(a, filters.HandlerFunc(serveModels))
	g.native[listRuns] = builtin.Authenticated(a, filters.HandlerFunc(s.listRuns))
	g.native[getRun] = builtin.Authenticated(a, filters.HandlerFunc(s.getRun))
	g.native[cancelRun] = builtin.Authenticated(a, filters.HandlerFunc(s.cancelRun))
	return g, nil
}

func newAuth(cfg *config.Config) (*auth.Auth, error) {
	ac := auth.Config{
		ActorPolicy:   auth.ActorPolicy(cfg.Actors.Missing),
		DefaultTenant: cfg.Actors.DefaultTenant,
		RatePerSecond: cfg.Limits.RatePerSecond,
		Burst:         cfg.Limits.Burst,
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

func newAgent(cfg *config.Config) (runner.Agent, error) {
	switch cfg.Provider.Kind {
	case "offline":
		return agent.New(offline.New(offline.Config{TokenDelay: cfg.Provider.Offline.TokenDelay.Std()})), nil
	}
	return nil, fmt.Errorf("provider.kind: unknown provider %q", cfg.Provider.Kind)
}
