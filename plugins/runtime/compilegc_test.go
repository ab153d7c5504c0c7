package runtime

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestLowerGCForCompileNests: overlapping compiles share one lowering and
// the process's own GC percent comes back only when the last one ends,
// whatever order they end in; a process already below the compile figure
// keeps its own.
func TestLowerGCForCompileNests(t *testing.T) {
	orig := debug.SetGCPercent(150)
	defer debug.SetGCPercent(orig)

	a := lowerGCForCompile()
	b := lowerGCForCompile()
	if got := gcPercent(); got != compileGCPercent {
		t.Fatalf("GC percent while compiling = %d, want %d", got, compileGCPercent)
	}
	a()
	a() // a second call of one restore is a no-op
	if got := gcPercent(); got != compileGCPercent {
		t.Fatalf("GC percent with one compile still running = %d, want %d", got, compileGCPercent)
	}
	b()
	if got := gcPercent(); got != 150 {
		t.Fatalf("GC percent after the last compile = %d, want 150", got)
	}

	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { lowerGCForCompile()() })
	}
	wg.Wait()
	if got := gcPercent(); got != 150 {
		t.Fatalf("GC percent after concurrent compiles = %d, want 150", got)
	}

	debug.SetGCPercent(10)
	restore := lowerGCForCompile()
	if got := gcPercent(); got != 10 {
		t.Fatalf("GC percent while compiling from 10 = %d, want 10 (never raised)", got)
	}
	restore()
	if got := gcPercent(); got != 10 {
		t.Fatalf("GC percent after = %d, want 10", got)
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
