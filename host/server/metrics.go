package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/runedge/runedge/plugins/runtime"
)

// metrics are the host's own Prometheus metrics, in a registry of its own
// (no global state: several servers can live in one process, as in tests).
// The plugin runtime registers its per-plugin metrics in the same registry.
type metrics struct {
	reg     *prometheus.Registry
	swaps   *prometheus.CounterVec
	plugins *runtime.Metrics
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		swaps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_plugin_swaps_total",
			Help: "Plugin swaps and reloads, by what was swapped and result (ok, failed).",
		}, []string{"stage", "result"}),
	}
	m.reg.MustRegister(m.swaps, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.plugins = runtime.NewMetrics(m.reg)
	return m
}
