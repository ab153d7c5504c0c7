package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// BenchmarkServiceRun is the runner's share of one request: session,
// thread and run rows, the offline agent, and the terminal write, on a real
// SQLite file.
func BenchmarkServiceRun(b *testing.B) { benchServiceRun(b, true) }

// BenchmarkServiceRunNonStream is BenchmarkServiceRun for a request that
// does not stream (make run's chat request): its events are never sent,
// only closed.
func BenchmarkServiceRunNonStream(b *testing.B) { benchServiceRun(b, false) }

func benchServiceRun(b *testing.B, stream bool) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := runner.NewService(b.Context(), runner.ServiceConfig{Store: st, Agent: agent.New(offline.New(offline.Config{}))})
	if err != nil {
		b.Fatal(err)
	}
	sp := spec("hello there", stream)
	b.ReportAllocs()
	for b.Loop() {
		h, err := svc.Start(b.Context(), sp)
		if err != nil {
			b.Fatal(err)
		}
		stop := h.OnInterrupt(func() {}) // as the run stage does (filters/run)
		if _, _, err := finish(h); err != nil {
			b.Fatal(err)
		}
		stop()
	}
}
