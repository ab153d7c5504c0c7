//go:build !unix

// Package cputime reads the process's CPU time, user and system, for the
// benchmarks that report cpu-ns/op.
package cputime

import "time"

// Process is not measured on this platform: benchmarks report 0.
func Process() time.Duration { return 0 }
