package sqlite_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

var benchRequest = []byte(`{"input":[{"role":"user","content":"hello"}],"stream":false}`)

func benchRun(session, thread string) *runner.Run {
	started := int64(1_700_000_000)
	return &runner.Run{
		ID: runner.NewID("run_"), Status: runner.StatusRunning, SessionID: session, ThreadID: thread,
		Actor: runner.Actor{ID: "svc", Type: "service"}, TenantID: "acme", Endpoint: "/v1/chat/completions",
		Model: "service", CreatedAt: started, StartedAt: &started, Request: benchRequest,
	}
}

// BenchmarkCreateAndFinishRun measures the two writes every request costs
// the store: the run row before the agent starts and its terminal state.
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		r := benchRun("sess_b", "thread_b")
		if err := s.StartRun(ctx, r, false, false); err != nil {
			b.Fatal(err)
		}
		ended := r.CreatedAt + 1
		if err := s.Transition(ctx, r.ID, runner.Transition{
			Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
			Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4},
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartRun measures the store calls runner.Service.Start makes
// before the agent starts, per kind of request. (The path Start took before
// StartRun, three commits instead of one, went with the methods it used:
// CreateSession, CreateThread, CreateRun had no other caller.)
func BenchmarkStartRun(b *testing.B) {
	b.Run("new-session", func(b *testing.B) {
		s := openTemp(b)
		b.ReportAllocs()
		for b.Loop() {
			r := benchRun(runner.NewID("sess_"), runner.NewID("thread_"))
			if err := s.StartRun(b.Context(), r, true, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("continue-session", func(b *testing.B) {
		s := openTemp(b)
		startSession(b, s)
		b.ReportAllocs()
		for b.Loop() {
			if err := s.StartRun(b.Context(), benchRun("sess_b", runner.NewID("thread_")), false, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("continue-thread", func(b *testing.B) {
		s := openTemp(b)
		startSession(b, s)
		b.ReportAllocs()
		for b.Loop() {
			// The service reads the thread's session, then inserts the run.
			sess, err := s.ThreadSession(b.Context(), "acme", "thread_b")
			if err != nil {
				b.Fatal(err)
			}
			if err := s.StartRun(b.Context(), benchRun(sess, "thread_b"), false, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// startSession opens session sess_b with thread thread_b for acme.
func startSession(b *testing.B, s *sqlite.Store) {
	b.Helper()
	if err := s.StartRun(b.Context(), benchRun("sess_b", "thread_b"), true, true); err != nil {
		b.Fatal(err)
	}
}
