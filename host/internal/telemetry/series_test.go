package telemetry

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/runner"
)

// The children series keeps are the vectors' own: what a request counts
// through them is what the vector reports under the same labels, with the
// tenant label and without.
func TestSeriesAreTheVectorsChildren(t *testing.T) {
	for _, tenantLabel := range []bool{false, true} {
		m := NewMetrics(tenantLabel)
		m.SetTenants([]string{"acme"})
		for _, tenant := range []string{"acme", "acme", "zz", "acme"} {
			m.Request(httproute.LabelChat, "POST", 200, tenant, time.Millisecond)
		}
		m.Request(httproute.LabelChat, "POST", 503, "acme", time.Millisecond)
		r := &runner.Run{Endpoint: httproute.LabelChat, Status: runner.StatusCompleted, TenantID: "zz",
			Usage: &runner.Usage{InputTokens: 5, OutputTokens: 7}}
		m.RunFinished(r)
		m.RunFinished(r)
		want := map[float64][]string{3: {httproute.LabelChat, "POST", "200", "acme"}, 1: {httproute.LabelChat, "POST", "200", "other"}}
		runs := []string{httproute.LabelChat, "completed", "", "other"}
		if !tenantLabel {
			want = map[float64][]string{4: {httproute.LabelChat, "POST", "200"}}
			runs = runs[:3]
		}
		for n, l := range want {
			if got := value(t, m.requests.WithLabelValues(l...)); got != n {
				t.Errorf("tenant label %v: requests %v = %v, want %v", tenantLabel, l, got, n)
			}
		}
		if got := value(t, m.runs.WithLabelValues(runs...)); got != 2 {
			t.Errorf("tenant label %v: runs %v = %v, want 2", tenantLabel, runs, got)
		}
		if got := value(t, m.spent.WithLabelValues("other", "output")); got != 14 {
			t.Errorf("tenant label %v: output tokens spent %v, want 14", tenantLabel, got)
		}
		ch := make(chan prometheus.Metric, 16)
		m.requests.Collect(ch)
		if got := len(ch); got != len(want)+1 {
			t.Errorf("tenant label %v: %d request series, want %d", tenantLabel, got, len(want)+1)
		}
	}
}

// value is a counter's count.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}
