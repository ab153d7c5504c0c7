package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// callAndRecover makes a call that must fault with a message containing
// want, then checks that the faulty instance is gone and that the next call
// gets a fresh one that works. p must have one idle instance.
func callAndRecover(t *testing.T, p *Plugin, h Hook, in, want string) *Fault {
	t.Helper()
	wantStats(t, p, Stats{Instances: 1, Idle: 1})
	_, err := p.Call(context.Background(), h, []byte(in))
	f := wantFault(t, err)
	if !strings.Contains(f.Error(), want) {
		t.Errorf("Call(%s, %.40q): Error() = %q, want it to contain %q", h, in, f.Error(), want)
	}
	if strings.Contains(f.Error(), "\n") {
		t.Errorf("Error() = %q spans lines", f.Error())
	}
	// A hook the plugin lacks faults before an instance is involved.
	if s := p.Stats(); p.Has(h) && s.Instances != 0 {
		t.Errorf("Stats() = %+v after a fault, want the instance discarded", s)
	}
	out, err := p.Call(context.Background(), MapRequest, []byte("next"))
	if err != nil || string(out) != "next" {
		t.Fatalf("Call after the fault = %q, %v; want a fresh instance to answer", out, err)
	}
	return f
}

func TestCallTimeBudget(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{CallTimeout: 50 * time.Millisecond})
	// spin keeps calling into the Go runtime (time.Since): the deadline is
	// checked at function entries every instrument.FuelPerTick steps.
	start := time.Now()
	_, err := p.Call(context.Background(), MapResult, []byte("spin:10000000"))
	elapsed := time.Since(start)
	if f := wantFault(t, err); !errors.Is(f, ErrTimeout) || f.Error() != "plugin echo: map_result: exceeded its 50ms time budget" {
		t.Errorf("Error() = %q, want the budget exceeded", f.Error())
	}
	// Generous: a loaded machine may deschedule the guest for a while.
	if elapsed < 50*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("the call took %v; want a little over the 50ms budget, not the 10s it asked for", elapsed)
	}
	wantStats(t, p, Stats{Instances: 0, Idle: 0})
	if out, err := p.Call(context.Background(), MapRequest, []byte("next")); err != nil || string(out) != "next" {
		t.Fatalf("Call after the fault = %q, %v; want a fresh instance to answer", out, err)
	}
}

func TestCallTimeBudgetDefault(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{})
	f := callAndRecover(t, p, MapResult, "spin:10000000", "exceeded its 250ms time budget")
	if !errors.Is(f, ErrTimeout) {
		t.Errorf("fault %v does not match ErrTimeout", f)
	}
}

// TestCallTimeBudgetCallFreeLoop runs a loop that never enters a function:
// it is stopped by the loop limit, then reported as out of time.
func TestCallTimeBudgetCallFreeLoop(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{CallTimeout: time.Millisecond})
	f := callAndRecover(t, p, MapResult, "loop", "exceeded its 1ms time budget")
	if !errors.Is(f, ErrTimeout) {
		t.Errorf("fault %v does not match ErrTimeout", f)
	}
}

func TestCallWithoutBudget(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{CallTimeout: -1})
	if out, err := p.Call(context.Background(), MapResult, []byte("spin:300000")); err != nil || string(out) != "result:spin:300000" {
		t.Fatalf("a 300ms call without a budget = %q, %v; want it to finish", out, err)
	}
	// Without a deadline, only the loop limit stops a call-free loop.
	want := fmt.Sprintf("runedge_map_result: stopped after %d loop iterations without a function call", instrument.MaxLoopSteps)
	f := callAndRecover(t, p, MapResult, "loop", want)
	if errors.Is(f, ErrTimeout) {
		t.Errorf("fault %v matches ErrTimeout without a budget", f)
	}
}

// TestCallRawGuestLoop stops an endless loop in a guest without Go or WASI.
func TestCallRawGuestLoop(t *testing.T) {
	g := echoGuest()
	g.loop = true
	p := loadRaw(t, newEngine(t), g, Options{CallTimeout: time.Millisecond})
	_, err := p.Call(context.Background(), MapRequest, []byte("x"))
	if f := wantFault(t, err); !errors.Is(f, ErrTimeout) || !strings.Contains(f.Error(), "exceeded its 1ms time budget") {
		t.Fatalf("Error() = %q, want the time budget exceeded", f.Error())
	}
	wantStats(t, p, Stats{Instances: 0, Idle: 0})
}

// TestLongCallDoesNotStallGC runs garbage collections during a long guest
// call that never calls the host. Native guest code cannot be stopped by
// the collector, which waits for every goroutine; the calls to tick are
// where it can.
func TestLongCallDoesNotStallGC(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{CallTimeout: -1})
	done := make(chan error, 1)
	go func() {
		// 100M calls of a small function: 0.5-2s.
		_, err := p.Call(context.Background(), MapResult, []byte("work:100000000"))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the guest get going
	var collections int
	var longest time.Duration
	for {
		start := time.Now()
		goruntime.GC()
		longest = max(longest, time.Since(start))
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if collections == 0 {
				t.Fatalf("no collection finished during the guest call (the first took %v)", longest)
			}
			if longest > 500*time.Millisecond {
				t.Errorf("a collection during a long guest call took %v; want it not to wait for the call", longest)
			}
			return
		default:
			collections++
		}
	}
}
