package runtime

import (
	"runtime/debug"
	"sync"
)

// compileGCPercent is the collector's target while a module compiles.
// Compiling a Go plugin allocates several times the module's size in
// short-lived compiler state; at the default GOGC=100 the heap doubles
// over that before each collection, and the process's peak RSS is that
// doubled heap (a cold start compiles two plugins: VmHWM 116–122 MiB,
// 110 MiB at 25). Compiles are rare (start, a live swap, a cache miss), so
// the extra collections cost nothing a request would see for long.
const compileGCPercent = 25

// lowGC holds the collector at compileGCPercent (or lower, if the process
// already runs lower) while at least one compile runs; SetGCPercent is
// process-wide, so concurrent compiles share one lowering and the last to
// finish restores what was set before the first began.
var lowGC struct {
	mu    sync.Mutex
	depth int
	prev  int
}

// lowerGCForCompile lowers the GC percent and returns the func that
// restores it.
func lowerGCForCompile() (restore func()) {
	lowGC.mu.Lock()
	if lowGC.depth == 0 {
		prev := debug.SetGCPercent(compileGCPercent)
		if prev >= 0 && prev < compileGCPercent {
			debug.SetGCPercent(prev)
		}
		lowGC.prev = prev
	}
	lowGC.depth++
	lowGC.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			lowGC.mu.Lock()
			defer lowGC.mu.Unlock()
			if lowGC.depth--; lowGC.depth == 0 {
				debug.SetGCPercent(lowGC.prev)
			}
		})
	}
}
