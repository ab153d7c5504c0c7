package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/runedge/runedge/runner"
)

// LeaseMetrics are the run service's lease metrics (runner.LeaseObserver):
// the leases this host holds, the runs it took over by what became of
// them, and the writes the fence refused.
type LeaseMetrics struct {
	held      prometheus.Gauge
	takeovers *prometheus.CounterVec
	fenced    prometheus.Counter
}

var _ runner.LeaseObserver = (*LeaseMetrics)(nil)

// Leases registers the lease metrics and returns their observer.
func (m *Metrics) Leases() *LeaseMetrics {
	l := &LeaseMetrics{
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "runedge_leases_held",
			Help: "Run leases this host holds, as of its last renewal.",
		}),
		takeovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runedge_run_takeovers_total",
			Help: "Runs this host took over after their lease ran out, by outcome: redriven (a background run driven again), interrupted (a foreground run failed), max_drives (a background run failed past runs.max_drives).",
		}, []string{"outcome"}),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "runedge_fenced_writes_total",
			Help: "Run writes refused because the run's lease was taken over by another acquisition.",
		}),
	}
	for _, o := range []string{"redriven", "interrupted", runner.ReasonMaxDrives} {
		l.takeovers.WithLabelValues(o)
	}
	m.reg.MustRegister(l.held, l.takeovers, l.fenced)
	return l
}

func (l *LeaseMetrics) LeasesHeld(n int)         { l.held.Set(float64(n)) }
func (l *LeaseMetrics) TakenOver(outcome string) { l.takeovers.WithLabelValues(outcome).Inc() }
func (l *LeaseMetrics) FencedWrite()             { l.fenced.Inc() }
