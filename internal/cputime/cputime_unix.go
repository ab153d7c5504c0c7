//go:build unix

// Package cputime reads the process's CPU time, user and system, for the
// benchmarks that report cpu-ns/op: on a shared machine the process's CPU
// is steadier than the wall time, and it counts every goroutine's work.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time the process has used so far (0 if unknown).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
