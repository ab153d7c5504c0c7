package heaptrim

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestTrimmerTrimsOnlyAQuietHost(t *testing.T) {
	const mb = 1 << 20
	tr := trimmer{min: 4 * mb}
	// A step is one look: the collections so far, the bytes allocated so
	// far, what would come back, and whether the trimmer trims.
	type step struct {
		name        string
		cycles      uint64
		allocs      uint64
		reclaimable uint64
		want        bool
	}
	run := func(phase string, steps []step) {
		t.Helper()
		for i, s := range steps {
			if got := tr.tick(s.cycles, s.allocs, s.reclaimable); got != s.want {
				t.Fatalf("%s, step %d (%s): tick(%d, %d, %d) = %v, want %v", phase, i, s.name, s.cycles, s.allocs, s.reclaimable, got, s.want)
			}
		}
	}
	run("a burst", []step{
		{"first look", 10, 500 * mb, 30 * mb, false},
		{"a busy host collects between looks", 14, 600 * mb, 30 * mb, false},
		{"still busy", 19, 700 * mb, 30 * mb, false},
		{"one quiet look is not enough", 19, 700 * mb, 30 * mb, false},
		{"two quiet looks and a heap to give back", 19, 700 * mb, 30 * mb, true},
	})
	tr.trimmed(20, 700*mb) // the trim's own collection
	run("after the trim", []step{
		{"quiet after a trim", 20, 700 * mb, 8 * mb, false},
		{"still quiet: one trim per collection of the host's", 20, 700 * mb, 8 * mb, false},
		{"the host collects", 21, 701 * mb, 8 * mb, false},
		{"quiet once", 21, 701 * mb, 8 * mb, false},
		{"quiet, but too little to give back", 21, 701 * mb, 3 * mb, false},
		{"quiet, enough to give back", 21, 701 * mb, 5 * mb, true},
	})
	// Under a heap floor a host at one connection collects seconds apart
	// while it allocates megabytes a second: busy, though no collection
	// ran between the looks.
	tr.trimmed(22, 701*mb)
	run("under a floor", []step{
		{"the host collects", 23, 702 * mb, 8 * mb, false},
		{"no collection, 6 MB allocated", 23, 708 * mb, 14 * mb, false},
		{"no collection, 6 MB more", 23, 714 * mb, 20 * mb, false},
		{"no collection, 6 MB more", 23, 720 * mb, 26 * mb, false},
		{"allocating under a quarter of min is quiet", 23, 720*mb + mb/2, 26 * mb, false},
		{"two quiet looks", 23, 721 * mb, 26 * mb, true},
	})
}

// TestTrimmerReleasesOncePerQuietSpell: the release follows the quiet
// check, whatever the heap would give back, once per collection of the
// host's own.
func TestTrimmerReleasesOncePerQuietSpell(t *testing.T) {
	tr := trimmer{min: 1 << 40} // never enough heap to trim on its own
	for i, s := range []struct {
		name   string
		cycles uint64
		want   bool
	}{
		{"first look", 5, false},
		{"one quiet look is not enough", 5, false},
		{"two quiet looks", 5, true},
		{"still quiet: once per spell", 5, false},
		{"the host collects", 6, false},
		{"quiet once", 6, false},
		{"quiet again", 6, true},
	} {
		tr.tick(s.cycles, 0, 0)
		if got := tr.release(); got != s.want {
			t.Fatalf("step %d (%s): release() = %v, want %v", i, s.name, got, s.want)
		}
	}
}

// TestStartReleasesAQuietHostThenTrims: on a quiet host the release runs
// once, and a release that let something go is followed by a trim (a
// forced collection) though the heap's figure is below min: what it let go
// of was live at the last collection.
func TestStartReleasesAQuietHostThenTrims(t *testing.T) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	forced := ms.NumForcedGC
	var calls atomic.Int32
	stop := Start(20*time.Millisecond, 1<<40, func() bool { calls.Add(1); return true })
	defer stop()
	deadline := time.Now().Add(2 * time.Second)
	for calls.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("release not called within 2 s on a quiet host")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // ten more looks
	stop()
	if n := calls.Load(); n != 1 {
		t.Fatalf("release called %d times over one quiet spell, want 1", n)
	}
	runtime.ReadMemStats(&ms)
	if ms.NumForcedGC == forced {
		t.Fatal("no trim after a release that let something go")
	}
}

func released() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sink keeps a burst's allocations from being optimised away.
var sink [][]byte

// burst allocates as a busy host does: many collections, each marking
// about live bytes, the last one while the burst still runs.
func burst(live int) {
	const chunk = 64 << 10
	window := make([][]byte, live/chunk)
	for i := range 8 * len(window) {
		window[i%len(window)] = make([]byte, chunk)
	}
	sink = window
	sink = nil
}

// TestStartGivesABurstsHeapBack: after a burst, with no collection since,
// the heap the burst left is returned within a few intervals. Without
// Start nothing collects, and the runtime's scavenger keeps what the last
// cycle's heap needed.
func TestStartGivesABurstsHeapBack(t *testing.T) {
	burst(24 << 20)
	before := released()
	stop := Start(20*time.Millisecond, 4<<20, nil)
	defer stop()
	deadline := time.Now().Add(2 * time.Second)
	for released() < before+16<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("released %d MiB since the burst, want at least 16", (released()-before)>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartLeavesABusyHostAlone: while the host collects between looks,
// no trim runs (a trim is a collection of its own: the count would grow
// faster than the load's).
func TestStartLeavesABusyHostAlone(t *testing.T) {
	var ms runtime.MemStats
	stop := Start(250*time.Millisecond, 1, nil)
	defer stop()
	runtime.ReadMemStats(&ms)
	forced := ms.NumForcedGC
	until := time.Now().Add(1500 * time.Millisecond)
	ring := make([][]byte, 1024)
	for i := 0; time.Now().Before(until); i++ {
		ring[i%len(ring)] = make([]byte, 1024) // a collection every few MB
	}
	sink = ring
	sink = nil
	stop()
	runtime.ReadMemStats(&ms)
	if ms.NumForcedGC != forced {
		t.Fatalf("%d forced collections while the host was busy, want none", ms.NumForcedGC-forced)
	}
}

// TestStartLeavesAHostUnderTheFloorAlone: a host that allocates steadily
// but collects seldom (a heap floor spaces its cycles seconds apart at one
// connection) is busy, not quiet: no trim runs. Counted by collections
// alone it was trimmed every two looks.
func TestStartLeavesAHostUnderTheFloorAlone(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100_000)) // no cycle of its own
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	forced, cycles := ms.NumForcedGC, ms.NumGC
	stop := Start(50*time.Millisecond, 4<<20, nil)
	defer stop()
	ring := make([][]byte, 256)
	for i, until := 0, time.Now().Add(600*time.Millisecond); time.Now().Before(until); i++ {
		ring[i%len(ring)] = make([]byte, 64<<10) // about 3 MiB a look
		if i%4 == 3 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	sink = ring
	sink = nil
	stop()
	runtime.ReadMemStats(&ms)
	if ms.NumGC-ms.NumForcedGC != cycles-forced {
		t.Fatalf("the host collected on its own (%d cycles): the test needs a host that does not", ms.NumGC-ms.NumForcedGC-(cycles-forced))
	}
	if ms.NumForcedGC != forced {
		t.Fatalf("%d forced collections while the host allocated steadily, want none", ms.NumForcedGC-forced)
	}
}

// TestStopEndsTheWatcher: stop returns once the watcher has ended (the
// server's Close leaves nothing running), and a second stop is harmless.
// goleak reads the goroutines again until the watcher is gone: stop
// returns when the watcher closes its exit channel, its last deferred
// call, and a stack dump taken at once could still catch the goroutine
// returning from it.
func TestStopEndsTheWatcher(t *testing.T) {
	before := goleak.IgnoreCurrent()
	stop := Start(time.Millisecond, 4<<20, nil)
	time.Sleep(5 * time.Millisecond)
	stop()
	goleak.VerifyNone(t, before)
	stop()
}
