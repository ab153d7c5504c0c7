package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/host/config"
)

// hostedTypes are the hosted tool types the withheld-tools metric names;
// any other type a client sends counts as "other", so that clients cannot
// grow the label set.
var hostedTypes = map[string]bool{
	"web_search": true, "web_search_preview": true, "web_search_preview_2025_03_11": true, "web_search_2025_08_26": true,
	"file_search": true, "code_interpreter": true, "image_generation": true, "mcp": true,
	"computer": true, "computer_use": true, "computer_use_preview": true,
	"local_shell": true, "shell": true, "apply_patch": true, "tool_search": true,
}

// newWithheldCounter registers runedge_tools_withheld_total.
func newWithheldCounter(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runedge_tools_withheld_total",
		Help: "Hosted tools (web_search, mcp …) in Responses requests that were not offered to the model, by type (other for unknown types).",
	}, []string{"type"})
	reg.MustRegister(c)
	return c
}

// Hosted is the map-request stage's policy for hosted tools (tools.hosted).
func (m *Metrics) Hosted(cfg *config.Config) mapping.Hosted {
	return cfg.Tools.Policy(func(typ string) {
		if !hostedTypes[typ] {
			typ = "other"
		}
		m.withheld.WithLabelValues(typ).Inc()
	})
}
