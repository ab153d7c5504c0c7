package ui

import (
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The page's charts read the server's Prometheus registry, so they show the
// same numbers a scraper gets from /metrics. The counters are cumulative;
// the sampler keeps a short ring of readings taken as the page asks for
// them (at most one a second), and the page draws rates and mean latency
// from the differences between readings.
const (
	metricRequests = "runedge_http_requests_total"
	metricDuration = "gen_ai_server_request_duration_seconds"
	metricTTFT     = "gen_ai_server_time_to_first_token_seconds"
	metricRuns     = "runedge_runs_total"
	metricInFlight = "runedge_runs_in_flight"

	maxSamples     = 600 // ten minutes at one reading a second
	sampleInterval = time.Second
)

// sample is one reading of the cumulative figures.
type sample struct {
	T             int64   `json:"t"` // Unix milliseconds
	Requests      float64 `json:"requests"`
	ClientErrors  float64 `json:"client_errors"` // 4xx
	ServerErrors  float64 `json:"server_errors"` // 5xx
	DurationSum   float64 `json:"duration_sum"`
	DurationCount float64 `json:"duration_count"`
	TTFTSum       float64 `json:"ttft_sum"`
	TTFTCount     float64 `json:"ttft_count"`
	InFlight      float64 `json:"in_flight"`
}

// histogram is a Prometheus histogram summed over its label sets.
type histogram struct {
	Count   float64  `json:"count"`
	Sum     float64  `json:"sum"`
	Buckets []bucket `json:"buckets"` // cumulative, as Prometheus keeps them
}

type bucket struct {
	LE    float64 `json:"le"`
	Count float64 `json:"count"`
}

// stats is the reply of GET /ui/api/stats.
type stats struct {
	Samples            []sample           `json:"samples"`
	Duration           histogram          `json:"duration"`
	TTFT               histogram          `json:"ttft"`
	RequestsByEndpoint map[string]float64 `json:"requests_by_endpoint"`
	RunsByStatus       map[string]float64 `json:"runs_by_status"`
}

type sampler struct {
	g prometheus.Gatherer

	mu      sync.Mutex
	samples []sample // ring, oldest first once full
	last    stats
	lastAt  time.Time
}

func newSampler(g prometheus.Gatherer) *sampler { return &sampler{g: g} }

// read returns the ring and the latest totals, reading the registry when
// the last reading is older than sampleInterval.
func (s *sampler) read(now time.Time) (stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastAt.IsZero() || now.Sub(s.lastAt) >= sampleInterval {
		fams, err := s.g.Gather()
		if err != nil {
			return stats{}, err
		}
		st, smp := summarize(fams)
		smp.T = now.UnixMilli()
		if len(s.samples) == maxSamples {
			copy(s.samples, s.samples[1:])
			s.samples = s.samples[:maxSamples-1]
		}
		s.samples = append(s.samples, smp)
		s.last, s.lastAt = st, now
	}
	out := s.last
	out.Samples = append([]sample(nil), s.samples...)
	return out, nil
}

// summarize reduces the registry to what the charts draw.
func summarize(fams []*dto.MetricFamily) (stats, sample) {
	st := stats{RequestsByEndpoint: map[string]float64{}, RunsByStatus: map[string]float64{}}
	var smp sample
	for _, f := range fams {
		switch f.GetName() {
		case metricRequests:
			for _, m := range f.GetMetric() {
				v := m.GetCounter().GetValue()
				smp.Requests += v
				st.RequestsByEndpoint[label(m, "endpoint")] += v
				switch code := label(m, "status"); {
				case strings.HasPrefix(code, "4"):
					smp.ClientErrors += v
				case strings.HasPrefix(code, "5"):
					smp.ServerErrors += v
				}
			}
		case metricRuns:
			for _, m := range f.GetMetric() {
				st.RunsByStatus[label(m, "status")] += m.GetCounter().GetValue()
			}
		case metricDuration:
			st.Duration = merge(f)
			smp.DurationSum, smp.DurationCount = st.Duration.Sum, st.Duration.Count
		case metricTTFT:
			st.TTFT = merge(f)
			smp.TTFTSum, smp.TTFTCount = st.TTFT.Sum, st.TTFT.Count
		case metricInFlight:
			for _, m := range f.GetMetric() {
				smp.InFlight += m.GetGauge().GetValue()
			}
		}
	}
	return st, smp
}

// merge sums a histogram family's series bucket by bucket.
func merge(f *dto.MetricFamily) histogram {
	h := histogram{Buckets: []bucket{}}
	byLE := map[float64]float64{}
	for _, m := range f.GetMetric() {
		hm := m.GetHistogram()
		h.Count += float64(hm.GetSampleCount())
		h.Sum += hm.GetSampleSum()
		for _, b := range hm.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				byLE[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
	}
	for le, n := range byLE {
		h.Buckets = append(h.Buckets, bucket{LE: le, Count: n})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].LE < h.Buckets[j].LE })
	return h
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func (u *UI) getStats(w http.ResponseWriter, r *http.Request) {
	st, err := u.stats.read(time.Now())
	if err != nil {
		u.fail(w, err)
		return
	}
	writeJSON(w, st)
}
