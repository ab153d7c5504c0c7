package runner

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestWorkersReuseAndExit: a run started while a worker is idle goes to
// that worker (no new goroutine); idle workers exit after their wait, and
// at once on close.
func TestWorkersReuseAndExit(t *testing.T) {
	w := newWorkers(200 * time.Millisecond)
	// Counted by the workers themselves, not runtime.NumGoroutine: the
	// package's other tests may leave goroutines that end meanwhile.
	live := func() int { return int(w.live.Load()) }
	done := make(chan struct{})
	w.run(func() { done <- struct{}{} })
	<-done
	for range 50 {
		// Once the worker is back in its wait, run hands it the next f;
		// when the machine is slow to get it there, run would start a
		// goroutine of its own (as it should), so the test waits for the
		// wait by offering f the way run does until the worker takes it.
		waitFor(t, func() bool {
			select {
			case w.work <- func() { done <- struct{}{} }:
				return true
			default:
				return false
			}
		})
		<-done
		if n := live(); n != 1 {
			t.Fatalf("%d workers after sequential runs, want 1: runs did not reuse the idle worker", n)
		}
	}
	// run itself reuses an idle worker: a run that started a goroutine of
	// its own would leave two, the new one idle for 200 ms.
	waitFor(t, func() bool {
		time.Sleep(time.Millisecond)
		w.run(func() { done <- struct{}{} })
		<-done
		return live() == 1
	})
	waitFor(t, func() bool { return live() == 0 }) // the idle wait ran out

	// Concurrent runs each get a worker; close stops them all once idle.
	w = newWorkers(time.Hour)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		w.run(func() { wg.Done(); <-release })
	}
	wg.Wait()
	if n := live(); n != 8 {
		t.Fatalf("%d workers with 8 runs at once, want 8", n)
	}
	close(release)
	w.close()
	waitFor(t, func() bool { return live() == 0 })
	ran := make(chan struct{})
	w.run(func() { close(ran) }) // after close: a goroutine of its own
	<-ran
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("condition not met; %d goroutines:\n%s", runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
