package postgres_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

// createAndFinish starts a run in a new thread of a known session and
// completes it.
func createAndFinish(b *testing.B, s runner.Store) {
	storetest.CreateAndFinish(b, s, storetest.BenchRun("sess_b", runner.NewID("thread_")), false, true)
}

// BenchmarkCreateAndFinishRun is a run's two store writes on PostgreSQL,
// one caller at a time (one connection: nothing to batch) and from 16 at
// once (group commit). cpu-ns/op is this process's CPU per run (the
// database's own is not counted).
func BenchmarkCreateAndFinishRun(b *testing.B) {
	s := openTemp(b)
	if err := s.StartRun(b.Context(), storetest.BenchRun("sess_b", "thread_b"), true, true); err != nil {
		b.Fatal(err)
	}
	b.Run("sequential", func(b *testing.B) {
		storetest.BenchSequentially(b, func() { createAndFinish(b, s) })
	})
	b.Run("parallel-16", func(b *testing.B) {
		storetest.BenchConcurrently(b, func() { createAndFinish(b, s) })
	})
}

// BenchmarkSamePrefix: storetest.BenchSamePrefix on PostgreSQL.
func BenchmarkSamePrefix(b *testing.B) { storetest.BenchSamePrefix(b, openTemp(b)) }
