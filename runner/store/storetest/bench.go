package storetest

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The drivers' benchmarks report cpu-ns/op, the process's CPU per
// operation: on a shared machine it is steadier than the wall time, and it
// counts what the group commit's batching saves.

// CPUTime is the process's user and system CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchConcurrently runs op from 8 goroutines per P at once (16 on two
// cores), so that the group commit batches their writes as under load,
// and reports cpu-ns/op.
func BenchConcurrently(b *testing.B, op func()) {
	b.ReportAllocs()
	b.SetParallelism(8)
	var n atomic.Int64
	cpu0 := CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op()
			n.Add(1)
		}
	})
	b.ReportMetric(float64(CPUTime()-cpu0)/float64(n.Load()), "cpu-ns/op")
}
