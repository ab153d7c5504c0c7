package runner

import (
	"sync"
	"sync/atomic"
	"time"
)

// workers runs each run's agent on a goroutine that has run agents before,
// when one is idle, instead of a new one. A new goroutine starts with a
// small stack and grows it, copying the stack each time it doubles, as the
// agent descends into the provider's HTTP client and its decoder: in a
// profile of 32 concurrent streams through the openai provider the
// copying was about 5% of the process's CPU (runtime.newstack under
// openai.decodeChunk). A worker keeps its grown stack from run to run
// until the collector shrinks it.
//
// A worker waits idleFor for the next run and then exits, so a burst of
// runs leaves no goroutines behind for long; Close stops the idle ones at
// once.
type workers struct {
	work    chan func()
	stop    chan struct{}
	stopped sync.Once
	idleFor time.Duration
	live    atomic.Int32 // workers running or idle: counted at start and exit, not per run
}

// workerIdle is how long an idle worker waits for another run.
const workerIdle = time.Second

func newWorkers(idleFor time.Duration) *workers {
	return &workers{work: make(chan func()), stop: make(chan struct{}), idleFor: idleFor}
}

// run calls f on an idle worker, or on a new one when none is idle. It
// does not wait for f.
func (w *workers) run(f func()) {
	select {
	case w.work <- f: // an idle worker was waiting: it has f now
	default:
		w.live.Add(1)
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	defer w.live.Add(-1)
	t := time.NewTimer(w.idleFor)
	defer t.Stop()
	for {
		f()
		f = nil // not held while idle
		t.Reset(w.idleFor)
		select {
		case f = <-w.work:
		case <-t.C:
			return
		case <-w.stop:
			return
		}
	}
}

// close stops the idle workers; busy ones stop when their run is done.
// Runs started after it get a goroutine of their own.
func (w *workers) close() { w.stopped.Do(func() { close(w.stop) }) }
