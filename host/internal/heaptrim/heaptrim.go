// Package heaptrim gives the heap a burst left behind back to the
// operating system once the host has fallen quiet.
//
// The Go runtime keeps freed heap pages resident and returns them at a pace
// set at each collection, towards what the last collection's heap needed.
// A host that falls quiet after a burst runs no collection for minutes
// (the runtime forces one every two), so it keeps the burst's heap — its
// freed pages, its goroutines' stacks, the garbage allocated since the last
// cycle — all that time, and the next burst finds it still resident.
//
// Start looks at the heap every interval. When for two intervals in a row
// no collection has run and the host allocated less than a quarter of min
// (quiet) and what a collection would give back (the heap not live at the
// last mark, and the free pages still resident) is at least min, it calls
// debug.FreeOSMemory: one collection that returns every free page. A busy
// host collects several times a second, or allocates megabytes a second
// under a heap floor (host/internal/gcfloor) that spaces its collections
// seconds apart, and is never trimmed; a quiet one is trimmed at most once
// per collection it ran on its own.
// A quiet host also lets go of what else a burst left (its provider's
// idle upstream connections), and is trimmed after it.
package heaptrim

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// quietTicks is how many quiet intervals in a row must pass before the
// heap is trimmed.
const quietTicks = 2

// quietShare: an interval is quiet when the host allocated less than
// min/quietShare in it. A host at one connection collects only every
// 1–3 s under the heap floor while it allocates 6–10 MB a second; counted
// as quiet by its collections alone, it was trimmed every few seconds, a
// forced collection and the scavenging of every free page on its one core
// in the middle of its requests, which then faulted the pages back in.
const quietShare = 4

// Start looks at the heap every interval until stop is called (stop
// returns once the watcher has ended); interval ≤ 0 does nothing.
//
// release, when not nil, is what the host can let go of besides the heap
// (the provider's idle upstream connections): it runs once the host is
// quiet, at most once per collection of the host's own, and reports
// whether it let anything go. What it let go of was live at the last
// collection, so a trim follows it whatever the heap's figure said.
func Start(interval time.Duration, min uint64, release func() bool) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		tr := trimmer{min: min}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			trim := tr.tick(read())
			if release != nil && tr.release() && release() {
				// The goroutines of what was let go (a connection's
				// reader and writer) end first, so the trim's
				// collection frees their stacks too.
				time.Sleep(releaseSettle)
				trim = true
			}
			if trim {
				debug.FreeOSMemory()
				cycles, allocs, _ := read()
				tr.trimmed(cycles, allocs)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-exited
		})
	}
}

// releaseSettle is how long a trim waits after a release.
const releaseSettle = 20 * time.Millisecond

// trimmer decides, tick by tick, when to trim.
type trimmer struct {
	min      uint64
	cycles   uint64 // collections completed at the last tick
	allocs   uint64 // heap bytes allocated in all at the last tick
	quiet    int    // quiet ticks in a row
	done     bool   // trimmed since the host's last collection
	released bool   // released since the host's last collection
}

// tick records the collections completed, the heap bytes allocated in all
// and the reclaimable bytes at this tick and reports whether to trim now.
func (t *trimmer) tick(cycles, allocs, reclaimable uint64) bool {
	busy := allocs-t.allocs >= t.min/quietShare
	t.allocs = allocs
	if cycles != t.cycles {
		t.cycles, t.quiet, t.done, t.released = cycles, 0, false, false
		return false
	}
	if busy {
		t.quiet = 0
		return false
	}
	t.quiet++
	return !t.done && t.quiet >= quietTicks && reclaimable >= t.min
}

// release reports, after a tick, whether to release now: the host is
// quiet and has not released since its last collection.
func (t *trimmer) release() bool {
	if t.released || t.quiet < quietTicks {
		return false
	}
	t.released = true
	return true
}

// trimmed records a trim and the collections completed and bytes
// allocated after it: the trim's own collection is not the host's, and
// the next trim waits for one of the host's.
func (t *trimmer) trimmed(cycles, allocs uint64) { t.cycles, t.allocs, t.done = cycles, allocs, true }

var names = []string{
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/allocs:bytes",
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

// read returns the collections completed, the heap bytes allocated in all,
// and the heap bytes a collection and a scavenge would give back: the
// bytes in objects and spans beyond those live at the last mark, and the
// free pages not yet returned.
func read() (cycles, allocs, reclaimable uint64) {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) uint64 { return s[i].Value.Uint64() }
	held := v(3) + v(4) + v(5)
	if live := v(2); held > live {
		reclaimable = held - live
	}
	return v(0), v(1), reclaimable
}
