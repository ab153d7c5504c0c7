package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// BenchmarkServiceRunNonStream is BenchmarkServiceRun for a request that
// does not stream (make run's chat request): its events are never sent,
// only closed, so the handle need not pay for a buffer.
func BenchmarkServiceRunNonStream(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := runner.NewService(b.Context(), runner.ServiceConfig{Store: st, Agent: agent.New(offline.New(offline.Config{}))})
	if err != nil {
		b.Fatal(err)
	}
	sp := spec("hello there", false)
	b.ReportAllocs()
	for b.Loop() {
		h, err := svc.Start(b.Context(), sp)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := finish(h); err != nil {
			b.Fatal(err)
		}
	}
}
