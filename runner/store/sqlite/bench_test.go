package sqlite_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
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
// the store: the run row before the agent starts and its terminal state,
// one caller at a time (each write its own transaction). cpu-ns/op is the
// process's CPU per run, steadier than the wall time on a shared machine.
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	b.ReportAllocs()
	cpu0 := storetest.CPUTime()
	for b.Loop() {
		createAndFinish(b, s)
	}
	b.ReportMetric(float64(storetest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkCreateAndFinishRun16 is BenchmarkCreateAndFinishRun from 16
// callers at once: the group commit batches their writes, as under load.
func BenchmarkCreateAndFinishRun16(b *testing.B) {
	s := openTemp(b)
	storetest.BenchConcurrently(b, func() { createAndFinish(b, s) })
}

// createAndFinish starts a run and completes it, as a request does.
func createAndFinish(b *testing.B, s *sqlite.Store) {
	r := benchRun("sess_b", "thread_b")
	if err := s.StartRun(b.Context(), r, false, false); err != nil {
		b.Error(err)
		return
	}
	ended := r.CreatedAt + 1
	if err := s.Transition(b.Context(), r.ID, runner.Transition{
		Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
		Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4},
	}); err != nil {
		b.Error(err)
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
