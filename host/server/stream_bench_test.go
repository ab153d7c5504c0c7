package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/plugins/plugintest"
)

// BenchmarkStream1000 streams a 1,000-token answer through the whole server
// and reports CPU time per chunk (server and client together, from
// getrusage): with the default plugin (no map_stream: native framing only),
// and with a plugin that exports map_stream, batched per arrival (window 0)
// and per 20 ms window. The default is a stored response (store defaults to
// true); default-store-false keeps nothing, the path before the response
// history; background persists its events in batches for resumption.
func BenchmarkStream1000(b *testing.B) {
	words := strings.TrimSpace(strings.Repeat("token ", 998)) // + "You said:" = 1,000 tokens
	stored := `{"model":"service","stream":true,"input":"` + words + `"}`
	versioned := plugintest.Build(b, "./testdata/versioned/v1")
	for _, bc := range []struct {
		name   string
		plugin string
		window time.Duration
		body   string
		// noWriteDeadline turns limits.write_timeout off: the baseline of
		// the per-write deadline's cost.
		noWriteDeadline bool
	}{
		{"default", "", 0, stored, false},
		{"default-no-write-deadline", "", 0, stored, true},
		{"default-store-false", "", 0, strings.Replace(stored, `"stream":true`, `"stream":true,"store":false`, 1), false},
		// A background stream's events are persisted in batches (and the
		// client follows the run's event log).
		{"background", "", 0, strings.Replace(stored, `"stream":true`, `"stream":true,"background":true`, 1), false},
		{"map_stream-window0", versioned, 0, stored, false},
		{"map_stream-window20ms", versioned, 20 * time.Millisecond, stored, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := start(b, func(c *config.Config) {
				if bc.plugin != "" {
					c.Chains[config.ChainResponses] = config.Chain{MapRequest: bc.plugin, Translate: bc.plugin}
				}
				c.Plugins.StreamWindow = config.Dur(bc.window)
				if bc.noWriteDeadline {
					c.Limits.WriteTimeout = config.Dur(0)
				}
			})
			client := &http.Client{}
			cpu0 := cputime.Process()
			b.ResetTimer()
			for b.Loop() {
				if err := benchDo(client, "POST", h.URL+"/v1/responses", bc.body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-ns/chunk")
		})
	}
}
