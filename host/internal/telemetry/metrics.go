package telemetry

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Metrics are the host's own Prometheus metrics, in a registry of its own
// (no global state: several servers can live in one process, as in tests).
// The registry belongs to the Server, not to a configuration generation, so
// counters survive reloads and plugin swaps. The plugin runtime registers
// its per-plugin metrics in the same registry.
//
// Names follow the OpenTelemetry GenAI semantic conventions where they
// exist (gen_ai.server.request.duration → gen_ai_server_request_duration_seconds,
// and so on); the rest are runedge_*. Labels are bounded: endpoint, method,
// status, reason and token type take a handful of values each; run, actor
// and session ids never appear, and tenant only with metrics.tenant_label,
// and then only configured tenants by name (tenantLabel).
type Metrics struct {
	reg     *prometheus.Registry
	swaps   *prometheus.CounterVec
	plugins *runtime.Metrics
	tenant  bool // metrics.tenant_label
	// tenants are the tenants that keep their label value (the current
	// configuration's; SetTenants); any other is otherTenant.
	tenants atomic.Pointer[map[string]struct{}]
	// off skips the run and store observations; only
	// BenchmarkObservability sets it, to measure what metrics cost.
	off atomic.Bool

	requests *prometheus.CounterVec   // endpoint, method, status [, tenant]
	duration *prometheus.HistogramVec // endpoint
	runs     *prometheus.CounterVec   // endpoint, status, reason [, tenant]
	ttft     *prometheus.HistogramVec // endpoint
	tpot     *prometheus.HistogramVec // endpoint
	tokens   *prometheus.HistogramVec // endpoint, gen_ai_token_type [, tenant]
	// spent counts tokens per tenant and type (the usage ledger's figures),
	// always by tenant: configured tenants by name, the rest as "other".
	spent *prometheus.CounterVec // tenant, type

	storeWrite  *prometheus.HistogramVec // op
	storeCommit prometheus.Histogram
	storeBatch  prometheus.Histogram

	withheld *prometheus.CounterVec // type (toolmetrics.go)

	sockets *prometheus.GaugeVec // [tenant]

	// The children the request path observes, by their label values
	// (series.go): requests and runs with the tenant last when labelled.
	requestSeries  *series[prometheus.Counter]
	durationSeries *series[prometheus.Observer]
	runSeries      *series[prometheus.Counter]
	ttftSeries     *series[prometheus.Observer]
	tpotSeries     *series[prometheus.Observer]
	tokenSeries    *series[prometheus.Observer]
	spentSeries    *series[prometheus.Counter]
	// storeStart and storeFinish are storeWrite's two ops.
	storeStart, storeFinish prometheus.Observer
}

// Bucket boundaries: the GenAI conventions' advice, with finer steps below
// 10 ms for request duration because runedge's own overhead lives there.
var (
	durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	ttftBuckets     = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	tpotBuckets     = []float64{0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}
	storeBuckets    = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
	batchBuckets    = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
)

func NewMetrics(tenantLabel bool) *Metrics {
	withTenant := func(labels ...string) []string {
		if tenantLabel {
			return append(labels, "tenant")
		}
		return labels
	}
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		tenant: tenantLabel,
		swaps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_plugin_swaps_total",
			Help: "Plugin swaps and reloads, by what was swapped and result (ok, failed).",
		}, []string{"stage", "result"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_http_requests_total",
			Help: "HTTP requests answered, by endpoint (the route table's labels, internal/httproute; unknown for no route), method and status.",
		}, withTenant("endpoint", "method", "status")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_request_duration_seconds",
			Help:    "Time from request to the reply's last byte on the generation endpoints (chat.completions, responses).",
			Buckets: durationBuckets,
		}, []string{"endpoint"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_runs_total",
			Help: "Runs ended, by endpoint, status (completed, failed, cancelled, waiting) and status reason.",
		}, withTenant("endpoint", "status", "reason")),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_time_to_first_token_seconds",
			Help:    "Time from a run's admission to the agent's first text delta.",
			Buckets: ttftBuckets,
		}, []string{"endpoint"}),
		tpot: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_server_time_per_output_token_seconds",
			Help:    "Time per output token after the first: (duration - time to first token) / (output tokens - 1).",
			Buckets: tpotBuckets,
		}, []string{"endpoint"}),
		tokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_client_token_usage",
			Help:    "Tokens per completed run, by gen_ai_token_type (input, output).",
			Buckets: tokenBuckets,
		}, withTenant("endpoint", "gen_ai_token_type")),
		spent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_tenant_tokens_total",
			Help: "Tokens of ended runs by tenant (configured tenants by name, the rest as other) and type (input, cached, output, reasoning), as the usage ledger records them.",
		}, []string{"tenant", "type"}),
		storeWrite: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "runedge_store_write_duration_seconds",
			Help:    "Run store writes on the request path as the request waits for them, by op (start, finish).",
			Buckets: storeBuckets,
		}, []string{"op"}),
		storeCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "runedge_store_commit_duration_seconds",
			Help:    "Run store commits: time per commit.",
			Buckets: storeBuckets,
		}),
		storeBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "runedge_store_commit_batch_size",
			Help:    "Run store commits: run writes per commit (1 unless the store group-commits).",
			Buckets: batchBuckets,
		}),
		sockets: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runedge_websockets_open",
			Help: "WebSockets of /v1/responses open now (by tenant with metrics.tenant_label).",
		}, withTenant()),
	}
	m.reg.MustRegister(m.swaps, m.requests, m.duration, m.runs, m.ttft, m.tpot, m.tokens, m.spent,
		m.storeWrite, m.storeCommit, m.storeBatch, m.sockets,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.plugins = runtime.NewMetrics(m.reg)
	m.withheld = newWithheldCounter(m.reg)
	tenantLabels := 0
	if tenantLabel {
		tenantLabels = 1
	}
	m.requestSeries = newSeries(3+tenantLabels, m.requests.WithLabelValues)
	m.durationSeries = newSeries(1, m.duration.WithLabelValues)
	m.runSeries = newSeries(3+tenantLabels, m.runs.WithLabelValues)
	m.ttftSeries = newSeries(1, m.ttft.WithLabelValues)
	m.tpotSeries = newSeries(1, m.tpot.WithLabelValues)
	m.tokenSeries = newSeries(2+tenantLabels, m.tokens.WithLabelValues)
	m.spentSeries = newSeries(2, m.spent.WithLabelValues)
	m.storeStart = m.storeWrite.WithLabelValues("start")
	m.storeFinish = m.storeWrite.WithLabelValues("finish")
	return m
}

// Registry is the registry every metric of the host is in: /metrics
// serves it, the operator page reads it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Plugins are the plugin runtime's metrics, in the same registry.
func (m *Metrics) Plugins() *runtime.Metrics { return m.plugins }

// Swapped counts one swap or reload of what (a stage, "reload", "xds")
// with its result (ok, failed).
func (m *Metrics) Swapped(what, result string) { m.swaps.WithLabelValues(what, result).Inc() }

// SetOff skips (true) or takes again (false) the run and store
// observations: for benchmarks that measure what metrics cost.
func (m *Metrics) SetOff(off bool) { m.off.Store(off) }

// InFlight registers the gauge of runs in flight, read from the service.
func (m *Metrics) InFlight(svc *runner.Service) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "runedge_runs_in_flight",
		Help: "Runs admitted and not yet finished, and input_tokens counts reading the history (each holds a slot).",
	}, func() float64 { return float64(svc.InFlight()) }))
}

// BytesInFlight registers the gauges of the request bytes a host
// processes at once (limits.max_bytes_in_flight) and of the requests
// waiting for room under it, read from the host's gate.
func (m *Metrics) BytesInFlight(bytes, waiting func() int64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "runedge_request_bytes_in_flight",
		Help: "Bytes of request bodies being processed, counted against limits.max_bytes_in_flight.",
	}, func() float64 { return float64(bytes()) }))
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "runedge_requests_waiting",
		Help: "Requests waiting, their bodies unread, for room under limits.max_bytes_in_flight.",
	}, func() float64 { return float64(waiting()) }))
}

// Request counts one answered HTTP request.
func (m *Metrics) Request(endpoint, method string, status int, tenant string, d time.Duration) {
	l := labels{endpoint, method, statusText(status)}
	if m.tenant {
		l[3] = m.tenantLabel(tenant)
	}
	m.requestSeries.of(l).Inc()
	// An upgrade's duration is its socket's life, not a request's.
	if (endpoint == httproute.LabelChat || endpoint == httproute.LabelResponses) && status != 101 { // 101 Switching Protocols
		m.durationSeries.of(labels{endpoint}).Observe(d.Seconds())
	}
}

// SocketOpened counts one open WebSocket of tenant; closed uncounts it,
// under the label it was counted with (a reload may change the tenants
// that keep their name).
func (m *Metrics) SocketOpened(tenant string) (closed func()) {
	var g prometheus.Gauge
	if m.tenant {
		g = m.sockets.WithLabelValues(m.tenantLabel(tenant))
	} else {
		g = m.sockets.WithLabelValues()
	}
	g.Inc()
	return g.Dec
}

// otherTenant is the tenant label of every tenant the configuration does
// not name: clients choose tenant names, and each value would be a series
// a scraper keeps (5,000 made-up names made 5,000 series).
const otherTenant = "other"

// SetTenants sets the tenants that keep their label value; install calls
// it with each configuration, so tokens added by a reload are labelled.
func (m *Metrics) SetTenants(names []string) {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	m.tenants.Store(&set)
}

// tenantLabel is the label value of tenant: its name when configured,
// otherTenant when not.
func (m *Metrics) tenantLabel(tenant string) string {
	if set := m.tenants.Load(); set != nil {
		if _, ok := (*set)[tenant]; ok {
			return tenant
		}
	}
	return otherTenant
}

// statusText avoids strconv for the common statuses.
func statusText(status int) string {
	switch status {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 404:
		return "404"
	}
	return strconv.Itoa(status)
}

// RunStarted implements runner.Observer; runs in flight are read from the
// service when scraped.
func (m *Metrics) RunStarted(*runner.Run) {}

// RunFinished implements runner.Observer.
func (m *Metrics) RunFinished(r *runner.Run) {
	if m.off.Load() {
		return
	}
	tenant := ""
	if m.tenant {
		tenant = m.tenantLabel(r.TenantID)
	}
	m.runSeries.of(labels{r.Endpoint, string(r.Status), r.StatusReason, tenant}).Inc()
	if r.FirstToken > 0 {
		m.ttftSeries.of(labels{r.Endpoint}).Observe(r.FirstToken.Seconds())
		if r.Usage != nil && r.Usage.OutputTokens > 1 && r.Elapsed > r.FirstToken {
			m.tpotSeries.of(labels{r.Endpoint}).Observe((r.Elapsed - r.FirstToken).Seconds() / float64(r.Usage.OutputTokens-1))
		}
	}
	if r.Usage != nil {
		for _, u := range []struct {
			kind string
			n    int
		}{{"input", r.Usage.InputTokens}, {"output", r.Usage.OutputTokens}} {
			m.tokenSeries.of(labels{r.Endpoint, u.kind, tenant}).Observe(float64(u.n))
		}
		m.countSpent(r)
	}
}

// ObserveCommit implements runner.CommitObserver.
func (m *Metrics) ObserveCommit(d time.Duration, writes int) {
	if m.off.Load() {
		return
	}
	m.storeCommit.Observe(d.Seconds())
	m.storeBatch.Observe(float64(writes))
}

// countSpent adds r's tokens to its tenant's counters, by type; a type
// the run did not use is not touched (a series appears with its first
// token).
func (m *Metrics) countSpent(r *runner.Run) {
	cached, reasoning := runner.UsageDetails(r.Usage)
	tenant := m.tenantLabel(r.TenantID)
	for _, u := range []struct {
		kind string
		n    int64
	}{{"input", int64(r.Usage.InputTokens)}, {"cached", cached}, {"output", int64(r.Usage.OutputTokens)}, {"reasoning", reasoning}} {
		if u.n > 0 {
			m.spentSeries.of(labels{tenant, u.kind}).Add(float64(u.n))
		}
	}
}
