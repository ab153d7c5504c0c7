package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHostCallsWithinBudget: a guest looping over any WASI function, with
// the largest arguments it can pass (16 MiB of random bytes, a million
// iovecs, a thousand one-second sleeps), ends within twice its budget.
// Before, a loop over random_get ran 11.6 s against 250 ms: host calls did
// not count.
func TestHostCallsWithinBudget(t *testing.T) {
	const budget = 300 * time.Millisecond
	p := loadGo(t, newEngine(t), "hostcalls", Options{CallTimeout: budget})
	for _, name := range []string{"random_get", "fd_write_stdout", "fd_write_stderr", "fd_read",
		"clock_time_get", "clock_res_get", "poll_oneoff", "sched_yield", "fd_fdstat_get",
		"args_sizes_get", "environ_sizes_get", "fd_prestat_get"} {
		t.Run(name, func(t *testing.T) {
			// An idle instance first: the bound is on the call, not on
			// making the instance that replaces the one the last fault
			// discarded.
			if _, err := p.Call(context.Background(), MapResult, []byte("warm")); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := p.Call(context.Background(), MapRequest, []byte(name))
			elapsed := time.Since(start)
			if f := wantFault(t, err); !errors.Is(f, ErrTimeout) {
				t.Errorf("Call = %v, want the budget exceeded", f)
			}
			if elapsed > 2*budget {
				t.Errorf("the call took %v; the bound is twice the %v budget", elapsed, budget)
			}
		})
	}
}
