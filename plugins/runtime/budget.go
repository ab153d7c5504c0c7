package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ErrTimeout is matched (errors.Is) by the Fault of a call that ran past its
// time budget, Options.CallTimeout.
var ErrTimeout = errors.New("time budget exceeded")

// fuelPerTick is how many function entries and loop iterations an
// instrumented guest runs between two calls of tick (see instrument.go), as
// long as it enters functions. It bounds how late a deadline is noticed and
// how long the host's garbage collector may wait for a running guest: a Go
// guest gets through it in roughly 20-200 µs. A tick costs about as much as
// a few hundred steps, so a much smaller value would show in every call.
const fuelPerTick = 1 << 14

// maxLoopSteps is how many loop iterations past its fuel an instrumented
// guest may run without entering a function, which would refill it, before
// it traps (see instrument.go). Such a loop is not checked against its
// deadline, so this bounds it instead: the tightest loop, a bare branch back,
// runs 2^26 iterations in 70-350 ms here, about the default budget. A mapping
// has no business running a longer loop without a call: scanning the largest
// input (4 MiB) byte by byte takes 4M iterations.
const maxLoopSteps = 1 << 26

// setupBudget is the least time budget of the calls that set an instance up:
// _initialize (milliseconds for a Go guest) and the self-test, which may run
// several golden cases. A short CallTimeout must not make a plugin unloadable.
const setupBudget = 5 * time.Second

// budget is the deadline of the call an instance is running. The instance's
// goroutine is the only one that touches it: tick runs on the calling
// goroutine, inside the guest call.
type budget struct {
	deadline time.Time // zero: no deadline
	expired  bool      // tick aborted the call
}

// start sets the deadline d from now; d <= 0 means none.
func (b *budget) start(d time.Duration) {
	b.expired = false
	b.deadline = time.Time{}
	if d > 0 {
		b.deadline = time.Now().Add(d)
	}
}

// passed reports whether the deadline has passed.
func (b *budget) passed() bool {
	return !b.deadline.IsZero() && time.Now().After(b.deadline)
}

// budgetKey is the context key of the *budget of an instance's calls.
type budgetKey struct{}

// errTickAbort is what tick panics with to abort a guest call. wazero turns
// a panic in a host function into the call's error.
var errTickAbort = errors.New("aborted by the host: time budget exceeded")

// tick is the host function that instrumented guests call every fuelPerTick
// steps. It aborts the call once its deadline has passed, and otherwise
// returns the fuel for the next stretch. Being Go code, it also gives the
// scheduler and garbage collector a point to stop the goroutine.
func tick(ctx context.Context, stack []uint64) {
	if b, _ := ctx.Value(budgetKey{}).(*budget); b != nil && b.passed() {
		b.expired = true
		panic(errTickAbort)
	}
	stack[0] = api.EncodeI32(fuelPerTick)
}

// instantiateTick adds the host module instrumented plugins import to rt.
func instantiateTick(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(tickModule).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(tick), nil, []api.ValueType{api.ValueTypeI32}).
		Export(tickName).
		Instantiate(ctx)
	return err
}

// budgetError is the cause of a Fault for a call that ran out of time.
type budgetError struct{ budget time.Duration }

func (e *budgetError) Error() string {
	return fmt.Sprintf("exceeded its %v time budget", e.budget)
}

func (e *budgetError) Is(target error) bool { return target == ErrTimeout }
