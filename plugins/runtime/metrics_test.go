package runtime

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/plugintest"
)

// newMetricsEngine returns an Engine reporting to a fresh registry.
func newMetricsEngine(t *testing.T) (*Engine, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e, err := NewEngine(context.Background(), EngineConfig{CacheDir: plugintest.CacheDir(t), Metrics: NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e, reg
}

// series gathers reg and returns the value of each series of the metric
// name, keyed by its labels as "k=v,k=v" in label order; for a histogram,
// its count.
func series(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := make(map[string]float64)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			out[strings.Join(labels, ",")] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

func TestMetricsCountCalls(t *testing.T) {
	e, reg := newMetricsEngine(t)
	p := loadGo(t, e, "echo", Options{Name: "chat", CallTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	for _, in := range []string{"ok", "invalid:bad|model|", "fail:broken", "spin:10000000", "ok"} {
		_, _ = p.Call(ctx, MapResult, []byte(in))
	}
	_, _ = p.Call(ctx, MapRequest, []byte("x"))
	_, _ = p.Call(ctx, Hook(9), []byte("x")) // not a hook: not counted

	wantSeries(t, series(t, reg, "runedge_plugin_calls_total"), map[string]float64{
		"hook=map_request,plugin=chat": 1,
		"hook=map_result,plugin=chat":  5,
		"hook=map_stream,plugin=chat":  0,
	})
	wantSeries(t, series(t, reg, "runedge_plugin_call_duration_seconds"), map[string]float64{
		"hook=map_request,plugin=chat": 1,
		"hook=map_result,plugin=chat":  5,
		"hook=map_stream,plugin=chat":  0,
	})
	errs := series(t, reg, "runedge_plugin_errors_total")
	for labels, want := range map[string]float64{
		"hook=map_result,kind=input,plugin=chat":   1,
		"hook=map_result,kind=fault,plugin=chat":   1,
		"hook=map_result,kind=timeout,plugin=chat": 1,
		"hook=map_request,kind=fault,plugin=chat":  0,
	} {
		if errs[labels] != want {
			t.Errorf("errors_total{%s} = %v, want %v", labels, errs[labels], want)
		}
	}
}

// TestMetricsInstances checks the instance gauge, summed over the versions
// of a plugin loaded under one name, as during a swap, and dropped once a
// closed plugin's last instance is.
func TestMetricsInstances(t *testing.T) {
	e, reg := newMetricsEngine(t)
	ctx := context.Background()
	old := loadRaw(t, e, echoGuest(), Options{Name: "chat", PoolSize: 2})
	g := echoGuest()
	g.hooks = int32(abi.HookMapRequest) // other bytes: another version
	next := loadRaw(t, e, g, Options{Name: "chat"})
	busy := hold(t, old)
	if _, err := old.Call(ctx, MapRequest, []byte("x")); err != nil { // a second instance
		t.Fatal(err)
	}
	wantSeries(t, series(t, reg, "runedge_plugin_instances"), map[string]float64{
		"plugin=chat,state=busy": 1,
		"plugin=chat,state=idle": 2, // one each
	})

	if err := old.Close(ctx); err != nil { // the swap is done; a call is still in flight
		t.Fatal(err)
	}
	wantSeries(t, series(t, reg, "runedge_plugin_instances"), map[string]float64{
		"plugin=chat,state=busy": 1,
		"plugin=chat,state=idle": 1,
	})
	old.pool.put(ctx, busy)
	_ = next.Close(ctx)
	wantSeries(t, series(t, reg, "runedge_plugin_instances"), map[string]float64{})
}

func wantSeries(t *testing.T, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("series = %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("series = %v, want %v", got, want)
			return
		}
	}
}

func TestNewMetricsRegisters(t *testing.T) {
	reg := prometheus.NewRegistry()
	NewMetrics(reg)
	defer func() {
		if recover() == nil {
			t.Error("a second NewMetrics on the same registry did not panic")
		}
	}()
	NewMetrics(reg)
}
