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
	base := runtime.NumGoroutine()
	done := make(chan struct{})
	w.run(func() { done <- struct{}{} })
	<-done
	waitFor(t, func() bool { return runtime.NumGoroutine() == base+1 }) // one idle worker
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
		if n := runtime.NumGoroutine(); n > base+1 {
			t.Fatalf("%d goroutines after sequential runs, want %d: runs did not reuse the idle worker", n, base+1)
		}
	}
	// run itself reuses an idle worker: a run that started a goroutine of
	// its own would leave two, the new one idle for 200 ms.
	waitFor(t, func() bool {
		time.Sleep(time.Millisecond)
		w.run(func() { done <- struct{}{} })
		<-done
		return runtime.NumGoroutine() == base+1
	})
	waitFor(t, func() bool { return runtime.NumGoroutine() == base }) // the idle wait ran out

	// Concurrent runs each get a worker; close stops them all once idle.
	w = newWorkers(time.Hour)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		w.run(func() { wg.Done(); <-release })
	}
	wg.Wait()
	if n := runtime.NumGoroutine(); n != base+8 {
		t.Fatalf("%d goroutines with 8 runs at once, want %d", n, base+8)
	}
	close(release)
	w.close()
	waitFor(t, func() bool { return runtime.NumGoroutine() == base })
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
