// Package gcfloor keeps the garbage collector's heap goal from falling
// below a floor, so a host with a small live heap does not collect every
// few hundred requests.
//
// With GOGC=100 the heap goal is about twice the live heap. A host serving
// one connection keeps 2–3 MB live and allocates about 30 KB per request,
// so it collected every 80 requests or so (20 cycles a second in
// bench-edge's one-connection scenario, each 1.4 ms of marking on the one
// core runedge is pinned to). The requests that overlapped a cycle were its
// p99: 1.9–2.4 ms added latency against 0.4 ms at p50. Raising GOGC for the
// whole process would lower that but also raise the goal of a busy host,
// whose live heap is larger, and with it the peak RSS. A floor changes only
// small heaps: after each cycle the percentage is set so that the next
// goal is the larger of the floor and what GOGC=100 would give. A heap whose
// GOGC=100 goal is above the floor (128 connections: 6 MB live, 14 MB goal)
// collects exactly as before.
//
// Over a very small live heap the goal lands above the floor: the
// runtime's minimum heap is 4 MiB × GOGC/100, so over 1 MB live, where the
// percentage is about 440, the goal is 17–18 MB (RATIONALE.md, "The tail
// at one connection: the collector", which also has the floors measured
// against it, higher and lower, at one connection).
//
// The floor is process-wide, like GOGC. An operator who sets GOGC in the
// environment keeps it: Start then does nothing. GOMEMLIMIT still bounds
// the heap as it always does.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// basePercent is GOGC's default, which the floor never goes below.
const basePercent = 100

// maxPercent bounds the percentage a tiny heap would need, so that a
// misread metric cannot switch collection off in effect.
const maxPercent = 10_000

var (
	mu      sync.Mutex
	floor   int64 // bytes; 0 when no Start is active
	users   int   // active Starts
	armed   bool  // a sentinel is waiting for the next cycle
	percent = basePercent
)

// Start keeps the heap goal at or above bytes until stop is called. Starts
// may overlap (several servers in one test process): the latest floor
// applies, and GOGC returns to its default when the last one stops. It does
// nothing when bytes ≤ 0 or GOGC is set in the environment, and reports
// whether it took effect.
func Start(bytes int64) (stop func(), active bool) {
	if bytes <= 0 || os.Getenv("GOGC") != "" {
		return func() {}, false
	}
	mu.Lock()
	floor = bytes
	users++
	if !armed {
		armed = true
		arm()
	}
	mu.Unlock()
	adjust() // the current heap, before the next cycle
	var once sync.Once
	return func() { once.Do(release) }, true
}

// release ends one Start; the last restores the default percentage.
func release() {
	mu.Lock()
	defer mu.Unlock()
	if users--; users > 0 {
		return
	}
	floor = 0
	if percent != basePercent {
		percent = basePercent
		debug.SetGCPercent(basePercent)
	}
}

// arm sets a sentinel whose finalizer runs after the next collection; the
// finalizer adjusts the percentage and arms the next one while a Start is
// active. Finalizers run on the runtime's finalizer goroutine, off any
// request.
func arm() {
	s := new(sentinel)
	runtime.SetFinalizer(s, func(*sentinel) {
		adjust()
		mu.Lock()
		defer mu.Unlock()
		if users > 0 {
			arm()
		} else {
			armed = false
		}
	})
}

// sentinel holds a pointer so that it is never tiny-allocated beside
// other objects, which would delay its finalizer past its own cycle.
type sentinel struct{ _ *int }

var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/scan/stack:bytes"},
	{Name: "/gc/scan/globals:bytes"},
}

// adjust sets the percentage for the live heap the last cycle marked. The
// runtime's goal is live + (live + stacks + globals) × GOGC/100, so the
// percentage that reaches the floor is (floor − live) × 100 / that sum.
func adjust() {
	mu.Lock()
	defer mu.Unlock()
	if users == 0 {
		return
	}
	metrics.Read(samples)
	live := int64(samples[0].Value.Uint64())
	scan := live + int64(samples[1].Value.Uint64()) + int64(samples[2].Value.Uint64())
	p := Percent(floor, live, scan)
	// Small changes are not worth the heap lock SetGCPercent takes.
	if p == percent || (p > basePercent && percent > basePercent && abs(p-percent)*20 < percent) {
		return
	}
	percent = p
	debug.SetGCPercent(p)
}

// Percent is the GOGC percentage that puts the heap goal at floor for a
// heap whose last cycle marked live bytes and scanned scan bytes (heap,
// stacks and globals), never below the default and never above maxPercent.
func Percent(floor, live, scan int64) int {
	if scan <= 0 || live >= floor {
		return basePercent
	}
	p := (floor - live) * 100 / scan
	return int(min(max(p, basePercent), maxPercent))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
