package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countCreates wraps p's instance factory to count the instances made.
func countCreates(p *Plugin) *atomic.Int32 {
	var made atomic.Int32
	create := p.pool.create
	p.pool.create = func(ctx context.Context) (*instance, error) {
		made.Add(1)
		return create(ctx)
	}
	return &made
}

// hold takes an instance out of p's pool, as a call in flight does.
func hold(t *testing.T, p *Plugin) *instance {
	t.Helper()
	if err := p.pool.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	inst, err := p.pool.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestPoolBoundsInstances runs PoolSize, then twice as many, concurrent
// callers: each gets its own answer and the pool never exceeds PoolSize.
// Each call keeps the guest busy for a while so that calls overlap.
func TestPoolBoundsInstances(t *testing.T) {
	const size = 3
	p := loadGo(t, newEngine(t), "echo", Options{PoolSize: size})
	made := countCreates(p)
	for _, callers := range []int{size, 2 * size} {
		t.Run(fmt.Sprintf("%d callers", callers), func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, callers)
			for c := range callers {
				wg.Go(func() {
					for i := range 20 {
						in := fmt.Sprintf("spin:300:caller %d call %d", c, i)
						out, err := p.Call(context.Background(), MapResult, []byte(in))
						if err != nil || string(out) != "result:"+in {
							errs <- fmt.Errorf("Call(%q) = %q, %v", in, out, err)
							return
						}
						if s := p.Stats(); s.Instances > size || s.Idle > s.Instances {
							errs <- fmt.Errorf("Stats() = %+v with PoolSize %d", s, size)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
	// One instance came from Load; no call faulted, so none was replaced.
	if n := made.Load(); n > size-1 {
		t.Errorf("made %d instances after Load, want at most %d", n, size-1)
	}
	if s := p.Stats(); s.Instances > size || s.Instances != s.Idle {
		t.Errorf("Stats() = %+v after all calls, want all instances idle and at most %d", s, size)
	}
}

func TestPoolWaitsForAFreeInstance(t *testing.T) {
	p := loadRaw(t, newEngine(t), echoGuest(), Options{PoolSize: 2})
	inst := hold(t, p)
	other := hold(t, p)
	defer p.pool.put(context.Background(), other)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, MapRequest, []byte("x"))
	var f *Fault
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &f) {
		t.Fatalf("Call while all instances are busy: error = %v, want the context's error and no Fault", err)
	}
	if !strings.Contains(err.Error(), "plugin raw: map_request: waiting for an instance") {
		t.Errorf("error %q does not say what it waited for", err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), MapRequest, []byte("x"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Call returned (%v) while all instances were busy", err)
	case <-time.After(20 * time.Millisecond):
	}
	p.pool.put(context.Background(), inst)
	if err := <-done; err != nil {
		t.Fatalf("waiting Call: %v", err)
	}
	wantStats(t, p, Stats{Instances: 2, Idle: 1})
}

func TestCloseWithCallInFlight(t *testing.T) {
	e := newEngine(t)
	p := loadRaw(t, e, echoGuest(), Options{PoolSize: 2})
	busy := hold(t, p)
	if _, err := p.Call(context.Background(), MapRequest, []byte("x")); err != nil { // makes a second, idle instance
		t.Fatal(err)
	}
	wantStats(t, p, Stats{Instances: 2, Idle: 1})

	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantStats(t, p, Stats{Instances: 1, Idle: 0}) // the idle one is closed now
	_, err := p.Call(context.Background(), MapRequest, []byte("x"))
	if f := wantFault(t, err); !errors.Is(f, ErrClosed) {
		t.Fatalf("Call after Close: %v, want ErrClosed", f)
	}
	if _, refs := compiledState(e); refs != 1 {
		t.Fatalf("compiled module references = %d while an instance is in use, want 1", refs)
	}

	p.pool.put(context.Background(), busy) // the call in flight returns
	wantStats(t, p, Stats{Instances: 0, Idle: 0})
	if !busy.mod.IsClosed() {
		t.Error("the instance returned after Close is still open")
	}
	if _, refs := compiledState(e); refs != 0 {
		t.Errorf("compiled module references = %d after the last instance closed, want 0", refs)
	}
}

// TestCloseUnderLoad closes a plugin while callers hammer it: every call
// either succeeds or fails with ErrClosed, and nothing is left open.
func TestCloseUnderLoad(t *testing.T) {
	e := newEngine(t)
	p := loadGo(t, e, "echo", Options{PoolSize: 2})
	var calls atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				out, err := p.Call(context.Background(), MapRequest, []byte("x"))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil || string(out) != "x" {
					errs <- fmt.Errorf("Call = %q, %v", out, err)
					return
				}
				calls.Add(1)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for calls.Load() < 20 && !isClosed(finished) { // let the callers get going
		time.Sleep(time.Millisecond)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-finished
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantStats(t, p, Stats{Instances: 0, Idle: 0})
	if _, refs := compiledState(e); refs != 0 {
		t.Errorf("compiled module references = %d after Close, want 0", refs)
	}
}

// isClosed reports whether ch is closed, without blocking.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestWarm(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{PoolSize: 3})
	made := countCreates(p)
	ctx := context.Background()
	if err := p.Warm(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantStats(t, p, Stats{Instances: 2, Idle: 2})
	if err := p.Warm(ctx, 10); err != nil { // capped at PoolSize
		t.Fatal(err)
	}
	wantStats(t, p, Stats{Instances: 3, Idle: 3})
	if n := made.Load(); n != 2 {
		t.Errorf("Warm made %d instances, want 2 besides the one Load made", n)
	}
	// Warmed instances serve calls without being made then.
	for range 3 {
		if _, err := p.Call(ctx, MapRequest, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if n := made.Load(); n != 2 {
		t.Errorf("calls after Warm made %d more instances, want none", n-2)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Warm(ctx, 1); err == nil || !errors.Is(err, ErrClosed) {
		t.Errorf("Warm after Close: error = %v, want ErrClosed", err)
	}
}

func TestWarmGivesUpWithContext(t *testing.T) {
	p := loadRaw(t, newEngine(t), echoGuest(), Options{PoolSize: 1})
	busy := hold(t, p)
	defer p.pool.put(context.Background(), busy)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.Warm(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Warm while the only instance is busy: error = %v, want the context's", err)
	}
}
