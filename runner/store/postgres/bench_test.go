package postgres_test

import (
	"context"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

var benchRequest = []byte(`{"input":[{"role":"user","content":"hello"}],"stream":false}`)

// createAndFinish makes a run's two writes: its row before the agent
// starts and its terminal state.
func createAndFinish(b *testing.B, s interface {
	StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error
	Transition(ctx context.Context, id string, t runner.Transition) error
}) {
	started := int64(1_700_000_000)
	r := &runner.Run{
		ID: runner.NewID("run_"), Status: runner.StatusRunning, SessionID: "sess_b", ThreadID: runner.NewID("thread_"),
		Actor: runner.Actor{ID: "svc", Type: "service"}, TenantID: "acme", Endpoint: "/v1/chat/completions",
		Model: "service", CreatedAt: started, StartedAt: &started, Request: benchRequest,
	}
	if err := s.StartRun(b.Context(), r, false, true); err != nil {
		b.Error(err)
		return
	}
	ended := started + 1
	if err := s.Transition(b.Context(), r.ID, runner.Transition{
		Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
		Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4},
	}); err != nil {
		b.Error(err)
	}
}

// BenchmarkCreateAndFinishRun is a run's two store writes on PostgreSQL,
// one caller at a time (one connection: nothing to batch) and from 16 at
// once (group commit). cpu-ns/op is this process's CPU per run (the
// database's own is not counted).
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	started := int64(1_700_000_000)
	if err := s.StartRun(b.Context(), &runner.Run{
		ID: runner.NewID("run_"), Status: runner.StatusRunning, SessionID: "sess_b", ThreadID: "thread_b",
		Actor: runner.Actor{ID: "svc", Type: "service"}, TenantID: "acme", Endpoint: "/v1/chat/completions",
		Model: "service", CreatedAt: started, StartedAt: &started, Request: benchRequest,
	}, true, true); err != nil {
		b.Fatal(err)
	}
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := storetest.CPUTime()
		for b.Loop() {
			createAndFinish(b, s)
		}
		b.ReportMetric(float64(storetest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("parallel-16", func(b *testing.B) {
		storetest.BenchConcurrently(b, func() { createAndFinish(b, s) })
	})
}
