package server

import (
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/runtime"
)

// engineConfig is the plugin runtime's configuration.
func (s *Server) engineConfig(cfg *config.Config) runtime.EngineConfig {
	return runtime.EngineConfig{CacheDir: cfg.Path(cfg.Plugins.CacheDir), Metrics: s.metrics.plugins}
}
