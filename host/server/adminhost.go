package server

import (
	"context"
	"sort"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// adminHost is the server as the admin API and the operator page see it
// (admin.Host): they reach the server through it alone.
type adminHost struct{ s *Server }

var _ admin.Host = adminHost{}

// Current returns the current generation's auth stage and configuration.
// The generation is released at once: the auth stage uses no plugin.
func (h adminHost) Current() (*auth.Auth, *config.Config) {
	g := h.s.acquire()
	defer h.s.release(g)
	return g.auth, g.cfg
}

func (h adminHost) Plugins() []admin.PluginInfo     { return h.s.Plugins() }
func (h adminHost) SwapHistory() []admin.SwapRecord { return h.s.SwapHistory() }
func (h adminHost) Runs() *runner.Service           { return h.s.runs }

func (h adminHost) CheckStage(stage string) error {
	_, err := stageKeys(stage)
	return err
}

func (h adminHost) SwapPlugin(ctx context.Context, stage, path string) error {
	return h.s.SwapPlugin(ctx, stage, path)
}

// SwapHistory returns the latest reloads and plugin swaps, newest first.
func (s *Server) SwapHistory() []admin.SwapRecord { return s.swaps.List() }

// Plugins lists each stage's plugin, sorted by stage.
func (s *Server) Plugins() []admin.PluginInfo {
	g := s.acquire()
	defer s.release(g)
	return pluginsOf(g)
}

// pluginsOf lists g's plugins; the caller holds g (acquire, or swapMu for
// the current generation).
func pluginsOf(g *generation) []admin.PluginInfo {
	out := make([]admin.PluginInfo, 0, len(g.stages))
	for stage, h := range g.stages {
		st := h.p.Stats()
		info := admin.PluginInfo{Stage: stage, Plugin: h.p.Name(), Version: admin.PluginVersion(h.p), SHA256: h.p.SHA256(),
			Since: h.since.Unix(), Instances: st.Instances, Idle: st.Idle, Hooks: []string{}}
		for _, hk := range []runtime.Hook{runtime.MapRequest, runtime.MapResult, runtime.MapStream} {
			if h.p.Has(hk) {
				info.Hooks = append(info.Hooks, hk.String())
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stage < out[j].Stage })
	return out
}
