package server

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// scrape reads /metrics from the admin listener with token and parses it.
func (h *harness) scrape(token string) map[string]*dto.MetricFamily {
	h.t.Helper()
	res, b := h.admin("GET", "/metrics", "", nil, token)
	if res.StatusCode != 200 {
		h.t.Fatalf("scrape: %d %s", res.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		h.t.Fatalf("scrape: %v\n%s", err, b)
	}
	return fams
}

// sample finds the series of family name whose labels are exactly labels
// ("k=v" pairs) and returns its value: a counter's or gauge's value, a
// histogram's count (sum as the second result).
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, float64) {
	t.Helper()
	want := append([]string(nil), labels...)
	sort.Strings(want)
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	var seen []string
	for _, m := range f.Metric {
		var got []string
		for _, l := range m.Label {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			seen = append(seen, strings.Join(got, ","))
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), 0
		case m.Gauge != nil:
			return m.Gauge.GetValue(), 0
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum()
		}
	}
	t.Fatalf("%s has no series {%s}; it has:\n%s", name, strings.Join(want, ","), strings.Join(seen, "\n"))
	return 0, 0
}

// After known traffic, /metrics counts it exactly: requests by endpoint,
// method and status; runs by outcome; durations, time to first token and
// tokens; store writes; nothing in flight. Only an admin token scrapes.
func TestMetricsCountKnownTraffic(t *testing.T) {
	h := start(t, nil)
	const chat = `{"model":"service","messages":[{"role":"user","content":"count these words"}]}`
	outTokens := 0
	for range 2 {
		b := body(t, h.do("POST", "/v1/chat/completions", chat, "x-service-tenant-id", "acme"))
		outTokens += int(gjson.GetBytes(b, "usage.completion_tokens").Int())
	}
	res := h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"stream it"}]}`)
	if res.StatusCode != 200 {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	body(t, res)
	if res := h.do("POST", "/v1/responses", `{"model":"service","input":"hello"}`); res.StatusCode != 200 {
		t.Fatalf("responses: %d %s", res.StatusCode, body(t, res))
	}
	wantError(t, h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"/fail"}]}`), 502, "api_error", "provider_error")
	wantError(t, h.do("POST", "/v1/chat/completions", `{"model":"gpt-4o","messages":[]}`), 404, "invalid_request_error", "model_not_found")
	wantError(t, h.do("GET", "/v1/models", "", "Authorization", "Bearer wrong"), 401, "authentication_error", "invalid_api_key")
	if res := h.do("GET", "/v1/models", ""); res.StatusCode != 200 {
		t.Fatalf("models: %d", res.StatusCode)
	}
	body(t, h.do("GET", "/runner/v1/runs?limit=1", ""))
	wantError(t, h.do("GET", "/nowhere/run_123", ""), 404, "invalid_request_error", "not_found")

	// Only an admin token scrapes.
	if res, _ := h.admin("GET", "/metrics", "", nil, tokApp); res.StatusCode != 403 {
		t.Fatalf("scrape with a non-admin token: %d, want 403", res.StatusCode)
	}
	if res, _ := h.admin("GET", "/metrics", "", nil, ""); res.StatusCode != 401 {
		t.Fatalf("scrape without a token: %d, want 401", res.StatusCode)
	}
	f := h.scrape(tokAdmin)
	counts := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"runedge_http_requests_total", []string{"endpoint=chat.completions", "method=POST", "status=200"}, 3},
		{"runedge_http_requests_total", []string{"endpoint=chat.completions", "method=POST", "status=502"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=chat.completions", "method=POST", "status=404"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=responses", "method=POST", "status=200"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=models", "method=GET", "status=200"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=models", "method=GET", "status=401"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=runner", "method=GET", "status=200"}, 1},
		{"runedge_http_requests_total", []string{"endpoint=unknown", "method=GET", "status=404"}, 1},
		{"gen_ai_server_request_duration_seconds", []string{"endpoint=chat.completions"}, 5},
		{"gen_ai_server_request_duration_seconds", []string{"endpoint=responses"}, 1},
		{"runedge_runs_total", []string{"endpoint=chat.completions", "status=completed", "reason="}, 3},
		{"runedge_runs_total", []string{"endpoint=chat.completions", "status=failed", "reason=provider_error"}, 1},
		{"runedge_runs_total", []string{"endpoint=responses", "status=completed", "reason="}, 1},
		{"gen_ai_server_time_to_first_token_seconds", []string{"endpoint=chat.completions"}, 3},
		{"gen_ai_server_time_per_output_token_seconds", []string{"endpoint=chat.completions"}, 3},
		{"gen_ai_client_token_usage", []string{"endpoint=chat.completions", "gen_ai_token_type=input"}, 3},
		{"gen_ai_client_token_usage", []string{"endpoint=chat.completions", "gen_ai_token_type=output"}, 3},
		{"gen_ai_client_token_usage", []string{"endpoint=responses", "gen_ai_token_type=output"}, 1},
		{"runedge_store_write_duration_seconds", []string{"op=start"}, 5},
		{"runedge_store_write_duration_seconds", []string{"op=finish"}, 5},
		// Sequential requests commit alone: the five runs' starts and
		// ends (the stored response's record and final object share
		// its run's start and end commits).
		{"runedge_store_commit_duration_seconds", nil, 10},
		{"runedge_store_commit_batch_size", nil, 10},
		{"runedge_runs_in_flight", nil, 0},
		{"runedge_request_bytes_in_flight", nil, 0},
		{"runedge_requests_waiting", nil, 0},
	}
	for _, c := range counts {
		if got, _ := sample(t, f, c.name, c.labels...); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	// The two non-streamed replies' completion tokens are in the output sum
	// (the streamed one did not report usage to the client).
	_, sum := sample(t, f, "gen_ai_client_token_usage", "endpoint=chat.completions", "gen_ai_token_type=output")
	if outTokens == 0 || sum <= float64(outTokens) {
		t.Errorf("output token sum %v, want more than the two replies' %d", sum, outTokens)
	}
	// Plugin metrics are still there; no series carries a tenant.
	if _, ok := f["runedge_plugin_calls_total"]; !ok {
		t.Error("plugin call metrics missing")
	}
	for _, m := range f["runedge_http_requests_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "tenant" {
				t.Fatal("tenant label without metrics.tenant_label")
			}
		}
	}
}

// metrics.tenant_label adds the tenant; admin.metrics_public opens /metrics
// to a scraper without a token.
func TestMetricsTenantLabelAndPublic(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Metrics.TenantLabel = true
		c.Admin.MetricsPublic = true
	})
	body(t, h.do("POST", "/v1/responses", `{"model":"service","input":"hello"}`, "x-service-tenant-id", "acme"))
	f := h.scrape("")
	if got, _ := sample(t, f, "runedge_http_requests_total", "endpoint=responses", "method=POST", "status=200", "tenant=acme"); got != 1 {
		t.Fatalf("requests for tenant acme = %v, want 1", got)
	}
	if got, _ := sample(t, f, "runedge_runs_total", "endpoint=responses", "status=completed", "reason=", "tenant=acme"); got != 1 {
		t.Fatalf("runs for tenant acme = %v, want 1", got)
	}
}
