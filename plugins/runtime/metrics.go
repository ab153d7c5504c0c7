package runtime

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus metrics of the plugins an Engine loads
// (EngineConfig.Metrics), labelled by plugin (Options.Name) and hook:
//
//	runedge_plugin_calls_total{plugin,hook}
//	runedge_plugin_errors_total{plugin,hook,kind}    kind: fault, input, timeout
//	runedge_plugin_call_duration_seconds{plugin,hook} histogram
//	runedge_plugin_instances{plugin,state}           state: busy, idle
//
// Versions of a plugin loaded under the same name, such as the old and new
// one during a swap, share their series: counters carry on across a swap and
// instances add up. A call is counted once it is made, for a hook the plugin
// implements; errors count the calls that returned an *InputError (input) or
// a *Fault (timeout when it ran out of time, fault otherwise), not those
// whose context ended while waiting for an instance. The duration runs from
// Call to its return, so it includes that wait.
type Metrics struct {
	calls     *prometheus.CounterVec
	errors    *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	instances *prometheus.Desc

	mu      sync.Mutex
	plugins map[*Plugin]struct{} // live plugins, for the instances gauge
}

// durationBuckets span an empty call into a WebAssembly guest (~5 µs with a
// Go guest's overhead) to a call near its time budget.
var durationBuckets = []float64{
	5e-6, 10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1,
}

// NewMetrics creates the plugin metrics and registers them with reg, unless
// reg is nil. Like prometheus.MustRegister, it panics if reg already has
// metrics of the same names.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_plugin_calls_total",
			Help: "Calls of plugin hooks.",
		}, []string{"plugin", "hook"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_plugin_errors_total",
			Help: "Failed calls of plugin hooks, by kind: fault (the plugin's fault), input (the input was invalid), timeout (the call exceeded its time budget).",
		}, []string{"plugin", "hook", "kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "runedge_plugin_call_duration_seconds",
			Help:    "Duration of calls of plugin hooks, including any wait for a free instance.",
			Buckets: durationBuckets,
		}, []string{"plugin", "hook"}),
		instances: prometheus.NewDesc("runedge_plugin_instances",
			"Instances of a plugin: busy running a call or idle in its pool.",
			[]string{"plugin", "state"}, nil),
		plugins: make(map[*Plugin]struct{}),
	}
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.calls.Describe(ch)
	m.errors.Describe(ch)
	m.duration.Describe(ch)
	ch <- m.instances
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.calls.Collect(ch)
	m.errors.Collect(ch)
	m.duration.Collect(ch)
	type counts struct{ busy, idle int }
	byName := make(map[string]counts)
	m.mu.Lock()
	for p := range m.plugins {
		live, idle := p.pool.stats()
		c := byName[p.name]
		c.busy += live - idle
		c.idle += idle
		byName[p.name] = c
	}
	m.mu.Unlock()
	for name, c := range byName {
		ch <- prometheus.MustNewConstMetric(m.instances, prometheus.GaugeValue, float64(c.busy), name, "busy")
		ch <- prometheus.MustNewConstMetric(m.instances, prometheus.GaugeValue, float64(c.idle), name, "idle")
	}
}

// pluginMetrics are one plugin's series, resolved once at Load so that a
// call only increments and observes.
type pluginMetrics [hookCount]*hookMetrics

// hookMetrics are the series of one plugin and hook.
type hookMetrics struct {
	calls                    prometheus.Counter
	faults, inputs, timeouts prometheus.Counter
	duration                 prometheus.Observer
}

// track starts reporting p's instances and returns its call metrics; nil
// when m is nil.
func (m *Metrics) track(p *Plugin) *pluginMetrics {
	pm := m.series(p)
	if pm == nil {
		return nil
	}
	m.mu.Lock()
	m.plugins[p] = struct{}{}
	m.mu.Unlock()
	return pm
}

// series returns p's call metrics without reporting instances (a native
// plugin has none); nil when m is nil.
func (m *Metrics) series(p *Plugin) *pluginMetrics {
	if m == nil {
		return nil
	}
	pm := new(pluginMetrics)
	for h := range Hook(hookCount) {
		if !p.Has(h) {
			continue
		}
		hook := h.String()
		pm[h] = &hookMetrics{
			calls:    m.calls.WithLabelValues(p.name, hook),
			faults:   m.errors.WithLabelValues(p.name, hook, "fault"),
			inputs:   m.errors.WithLabelValues(p.name, hook, "input"),
			timeouts: m.errors.WithLabelValues(p.name, hook, "timeout"),
			duration: m.duration.WithLabelValues(p.name, hook),
		}
	}
	return pm
}

// forget stops reporting p's instances, once its last one is closed.
func (m *Metrics) forget(p *Plugin) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.plugins, p)
	m.mu.Unlock()
}

// hook returns the metrics of hook h; nil without metrics or when the plugin
// does not implement h.
func (pm *pluginMetrics) hook(h Hook) *hookMetrics {
	if pm == nil || !h.valid() {
		return nil
	}
	return pm[h]
}

// observe records a call that started at start and returned err.
func (m *hookMetrics) observe(start time.Time, err error) {
	m.duration.Observe(time.Since(start).Seconds())
	m.calls.Inc()
	if err == nil {
		return
	}
	var ie *InputError
	var f *Fault
	switch {
	case errors.As(err, &ie):
		m.inputs.Inc()
	case errors.Is(err, ErrTimeout):
		m.timeouts.Inc()
	case errors.As(err, &f):
		m.faults.Inc()
	}
}
