package server

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/runedge/runedge/host/config"
)

// metrics.tenant_label: tenants a client makes up share the label value
// "other"; configured tenants (tokens' tenants, the default tenant,
// metrics.tenants) keep their names. 5,000 requests naming random tenants
// make a handful of series, not 5,000.
func TestMetricsTenantLabelBounded(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Metrics.TenantLabel = true
		c.Metrics.Tenants = []string{"listed"}
		c.Admin.MetricsPublic = true
	})
	const n, workers = 5000, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				res := h.do("GET", "/v1/models", "", "x-service-tenant-id", fmt.Sprintf("t-%x", rand.Uint64()))
				if b := body(t, res); res.StatusCode != 200 {
					t.Errorf("models: %d %s", res.StatusCode, b)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, tenant := range []string{"acme", "listed", "made-up-tenant"} {
		body(t, h.do("POST", "/v1/responses", `{"model":"service","input":"hello"}`, "x-service-tenant-id", tenant))
	}
	f := h.scrape("")
	values := map[string]bool{}
	for _, name := range []string{"runedge_http_requests_total", "runedge_runs_total", "gen_ai_client_token_usage"} {
		for _, m := range f[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" {
					values[l.GetValue()] = true
				}
			}
		}
	}
	// acme (a token's), listed (metrics.tenants), default (actors.default_tenant), other.
	if len(values) > 4 {
		t.Fatalf("%d tenant label values after %d requests naming random tenants", len(values), n)
	}
	if got, _ := sample(t, f, "runedge_http_requests_total", "endpoint=models", "method=GET", "status=200", "tenant=other"); got != n {
		t.Fatalf("requests of made-up tenants labelled other = %v, want %d", got, n)
	}
	for _, tenant := range []string{"acme", "listed", "other"} {
		if got, _ := sample(t, f, "runedge_runs_total", "endpoint=responses", "status=completed", "reason=", "tenant="+tenant); got != 1 {
			t.Fatalf("runs of tenant %s = %v, want 1", tenant, got)
		}
	}
}
