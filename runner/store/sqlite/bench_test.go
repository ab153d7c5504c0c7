package sqlite_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
)

// BenchmarkCreateAndFinishRun measures the two writes every request costs
// the store: the run row before the agent starts and its terminal state.
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	ctx := b.Context()
	started := int64(1_700_000_000)
	req := []byte(`{"input":[{"role":"user","content":"hello"}],"stream":false}`)
	b.ReportAllocs()
	for b.Loop() {
		r := &runner.Run{
			ID: runner.NewID("run_"), Status: runner.StatusRunning, SessionID: "sess_b", ThreadID: "thread_b",
			Actor: runner.Actor{ID: "svc", Type: "service"}, TenantID: "acme", Endpoint: "/v1/chat/completions",
			Model: "service", CreatedAt: started, StartedAt: &started, Request: req,
		}
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		ended := started + 1
		if err := s.Transition(ctx, r.ID, runner.Transition{
			Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
			Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4},
		}); err != nil {
			b.Fatal(err)
		}
	}
}
