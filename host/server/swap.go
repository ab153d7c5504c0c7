package server

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
)

// acquire returns the current generation, held for one request: a swap
// retires it but does not release its plugins until release.
func (s *Server) acquire() *generation {
	for {
		g := s.gen.Load()
		g.active.Add(1)
		if s.gen.Load() == g {
			return g
		}
		s.release(g) // lost a race with a swap: take the new one
	}
}

func (s *Server) release(g *generation) {
	if g.active.Add(-1) == 0 && g.retired.Load() {
		g.close(s.closeCtx)
	}
}

// install makes g current and retires the previous generation, whose
// plugins are released once its requests in flight are done.
func (s *Server) install(g *generation) {
	s.limits.Configure(g.cfg.Limits.Rates())
	s.bodies.Set(g.cfg.Limits.MaxBytesInFlight, g.cfg.Limits.BytesInFlightWait.Std())
	s.meter(g.cfg)
	s.metrics.SetTenants(g.cfg.LabelledTenants())
	old := s.gen.Swap(g)
	if old == nil {
		return
	}
	old.retired.Store(true)
	if old.active.Load() == 0 {
		old.close(s.closeCtx)
	}
	if s.ops != nil {
		s.ops.Revalidate() // a token removed or rotated ends its sessions now
	}
}

// Reload builds a generation from cfg and swaps it in. Plugins whose files
// did not change are kept. The settings read only at start
// (config.RestartOnly: listeners, store, provider, plugin runtime,
// telemetry, host id, the run service's limits) keep their running value,
// and each one that changed is reported. On error the current generation
// keeps serving.
func (s *Server) Reload(ctx context.Context, cfg *config.Config) error {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	next := *cfg
	for _, f := range config.KeepRestartOnly(s.gen.Load().cfg, &next) {
		s.log.Warn("configuration change needs a restart; keeping the running value", "field", f)
	}
	if s.xdsChains != nil { // the control plane's chains win over the file's
		next.Chains = maps.Clone(next.Chains)
		maps.Copy(next.Chains, s.xdsChains)
	}
	return s.rebuild(ctx, &next, "reload")
}

// ApplyChains replaces the plugin files of the given endpoints' chains
// (keys config.ChainChat, config.ChainResponses); an empty field keeps the
// stage's current plugin. This is the xDS path: chains applied here are
// remembered and survive later reloads of the host's own file.
func (s *Server) ApplyChains(ctx context.Context, chains map[string]config.Chain) error {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	next := *s.gen.Load().cfg
	next.Chains = maps.Clone(next.Chains)
	for k, ch := range chains {
		cur := next.Chains[k]
		if ch.MapRequest != "" {
			cur.MapRequest = ch.MapRequest
		}
		if ch.Translate != "" {
			cur.Translate = ch.Translate
		}
		next.Chains[k] = cur
	}
	if err := next.Validate(); err != nil {
		return err
	}
	if err := s.rebuild(ctx, &next, "xds"); err != nil {
		return err
	}
	if s.xdsChains == nil {
		s.xdsChains = map[string]config.Chain{}
	}
	for k := range chains {
		s.xdsChains[k] = next.Chains[k]
	}
	return nil
}

// SwapPlugin puts the plugin file at path into stage: "ENDPOINT/STAGE"
// (e.g. "chat.completions/translate") or a bare stage name for both
// endpoints. The new plugin is compiled, instantiated and self-tested before
// it takes traffic; on any failure the old one keeps serving.
func (s *Server) SwapPlugin(ctx context.Context, stage, path string) error {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	keys, err := stageKeys(stage)
	if err != nil {
		return err
	}
	next := *s.gen.Load().cfg
	next.Chains = maps.Clone(next.Chains)
	for _, k := range keys {
		ep, st, _ := strings.Cut(k, "/")
		ch := next.Chains[ep]
		if st == StageMapRequest {
			ch.MapRequest = path
		} else {
			ch.Translate = path
		}
		next.Chains[ep] = ch
	}
	return s.rebuild(ctx, &next, stage)
}

func (s *Server) rebuild(ctx context.Context, cfg *config.Config, what string) error {
	before := pluginsOf(s.gen.Load()) // under swapMu: the current generation stays
	g, err := s.build(ctx, cfg)
	if err != nil {
		s.metrics.Swapped(what, "failed")
		s.swaps.Add(admin.NewSwapRecord(ctx, what, before, nil, err))
		return fmt.Errorf("swap %s: %w (the previous version keeps serving)", what, err)
	}
	s.swaps.Add(admin.NewSwapRecord(ctx, what, before, pluginsOf(g), nil))
	s.install(g)
	if g.fresh {
		go returnHeap() // off the swap's reply and the requests
	}
	s.metrics.Swapped(what, "ok")
	s.log.Info("plugins swapped", "what", what)
	return nil
}

// stageKeys expands a stage argument into generation stage keys.
func stageKeys(stage string) ([]string, error) {
	endpoints := []string{config.ChainChat, config.ChainResponses}
	ep, st, ok := strings.Cut(stage, "/")
	if !ok {
		ep, st = "", stage
	}
	if st != StageMapRequest && st != StageTranslate {
		return nil, fmt.Errorf("unknown stage %q: want map-request or translate, optionally after an endpoint (chat.completions/translate)", stage)
	}
	if ep != "" {
		if ep != config.ChainChat && ep != config.ChainResponses {
			return nil, fmt.Errorf("unknown endpoint %q in stage %q", ep, stage)
		}
		endpoints = []string{ep}
	}
	keys := make([]string, len(endpoints))
	for i, e := range endpoints {
		keys[i] = e + "/" + st
	}
	return keys, nil
}
