package server

import (
	"runtime/debug"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/runtime"
)

// engineConfig is the plugin runtime's configuration.
func (s *Server) engineConfig(cfg *config.Config) runtime.EngineConfig {
	return runtime.EngineConfig{CacheDir: cfg.Path(cfg.Plugins.CacheDir), Metrics: s.metrics.Plugins()}
}

// returnHeap gives the Go heap's free memory back to the OS at once. After
// plugins are loaded the heap holds what compiling them used, collected
// but kept by the runtime as idle heap: a host started cold went on
// holding 95 MiB, 56 MiB after this (RATIONALE.md, "Peak RSS"). A forced
// collection and release costs milliseconds, once per start or swap that
// loaded a plugin.
func returnHeap() { debug.FreeOSMemory() }
