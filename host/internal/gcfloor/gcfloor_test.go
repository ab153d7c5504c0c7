package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name              string
		floor, live, scan int64
		want              int
	}{
		{"small heap reaches the floor", 12 * mb, 2 * mb, 2*mb + mb/2, 400},
		{"a goal above the floor keeps the default", 12 * mb, 6 * mb, 7 * mb, 100},
		{"a live heap above the floor keeps the default", 12 * mb, 20 * mb, 21 * mb, 100},
		{"nothing scanned keeps the default", 12 * mb, 0, 0, 100},
		{"a tiny heap is bounded", 1 << 40, 1, 1, maxPercent},
	} {
		if got := Percent(c.floor, c.live, c.scan); got != c.want {
			t.Errorf("%s: Percent(%d, %d, %d) = %d, want %d", c.name, c.floor, c.live, c.scan, got, c.want)
		}
	}
}

// gcPercent reads GOGC's current percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitFor collects until cond holds (the floor is set by a finalizer, after
// a cycle), or fails.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: heap goal %d bytes, GOGC %d", what, heapGoal(), gcPercent())
}

// A test binary's live heap is a few MB: a 256 MiB floor must raise the
// goal to it, follow the collections, and give the default back at stop.
func TestFloorRaisesTheGoalOfASmallHeap(t *testing.T) {
	t.Setenv("GOGC", "") // the floor stands down for an explicit GOGC
	const floorBytes = 256 << 20
	if heapGoal() >= floorBytes/2 {
		t.Fatalf("heap goal already %d before the floor", heapGoal())
	}
	stop, on := Start(floorBytes)
	if !on {
		t.Fatal("Start did not take effect")
	}
	waitFor(t, "goal at the floor", func() bool { return heapGoal() >= floorBytes*9/10 })
	// Another cycle re-reads the heap: the floor holds across collections.
	runtime.GC()
	waitFor(t, "goal at the floor after more cycles", func() bool { return heapGoal() >= floorBytes*9/10 })
	stop()
	stop() // twice is harmless
	if p := gcPercent(); p != basePercent {
		t.Fatalf("GOGC after stop = %d, want %d", p, basePercent)
	}
	waitFor(t, "goal back to the default", func() bool { return heapGoal() < floorBytes/2 })
}

// Overlapping Starts (several servers in one process) keep the floor until
// the last one stops.
func TestOverlappingStarts(t *testing.T) {
	t.Setenv("GOGC", "")
	const floorBytes = 256 << 20
	stop1, _ := Start(floorBytes)
	stop2, _ := Start(floorBytes)
	waitFor(t, "goal at the floor", func() bool { return heapGoal() >= floorBytes*9/10 })
	stop1()
	waitFor(t, "goal at the floor with one Start left", func() bool { return heapGoal() >= floorBytes*9/10 })
	stop2()
	waitFor(t, "goal back to the default", func() bool { return heapGoal() < floorBytes/2 })
}

func TestGOGCInTheEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "100")
	stop, on := Start(256 << 20)
	defer stop()
	if on {
		t.Fatal("Start took effect although GOGC is set")
	}
	runtime.GC()
	if p := gcPercent(); p != basePercent {
		t.Fatalf("GOGC = %d, want %d", p, basePercent)
	}
}

func TestOffWithoutAFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	for _, b := range []int64{0, -1} {
		if _, on := Start(b); on {
			t.Fatalf("Start(%d) took effect", b)
		}
	}
}
