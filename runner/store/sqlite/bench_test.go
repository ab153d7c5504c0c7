package sqlite_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
)

var benchRun = storetest.BenchRun

// BenchmarkCreateAndFinishRun measures the two writes every request costs
// the store: the run row before the agent starts and its terminal state,
// one caller at a time (each write its own transaction). cpu-ns/op is the
// process's CPU per run, steadier than the wall time on a shared machine.
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	storetest.BenchSequentially(b, func() { createAndFinish(b, s) })
}

// BenchmarkCreateAndFinishRun16 is BenchmarkCreateAndFinishRun from 16
// callers at once: the group commit batches their writes, as under load.
func BenchmarkCreateAndFinishRun16(b *testing.B) {
	s := openTemp(b)
	storetest.BenchConcurrently(b, func() { createAndFinish(b, s) })
}

// createAndFinish starts a run in a known thread and completes it.
func createAndFinish(b *testing.B, s *sqlite.Store) {
	storetest.CreateAndFinish(b, s, benchRun("sess_b", "thread_b"), false, false)
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
	// A new session and thread whose ids the service generated: nothing
	// to check (runner.Service.place), so the insert has no lookups.
	// Beside new-session it prices the two checks.
	b.Run("generated-ids", func(b *testing.B) {
		s := openTemp(b)
		b.ReportAllocs()
		for b.Loop() {
			r := benchRun(runner.NewID("sess_"), runner.NewID("thread_"))
			if err := s.StartRun(b.Context(), r, false, false); err != nil {
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
