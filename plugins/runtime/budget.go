package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ErrTimeout is matched (errors.Is) by the Fault of a call that ran past its
// time budget, Options.CallTimeout.
var ErrTimeout = errors.New("time budget exceeded")

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

// tick is the host function that instrumented guests call every instrument.FuelPerTick
// steps. It aborts the call once its deadline has passed, and otherwise
// returns the fuel for the next stretch. Being Go code, it also gives the
// scheduler and garbage collector a point to stop the goroutine.
func tick(ctx context.Context, stack []uint64) {
	if b, _ := ctx.Value(budgetKey{}).(*budget); b != nil && b.passed() {
		b.expired = true
		panic(errTickAbort)
	}
	stack[0] = api.EncodeI32(instrument.FuelPerTick)
}

// instantiateTick adds the host module instrumented plugins import to rt.
func instantiateTick(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(instrument.TickModule).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(tick), nil, []api.ValueType{api.ValueTypeI32}).
		Export(instrument.TickName).
		Instantiate(ctx)
	return err
}

// budgetError is the cause of a Fault for a call that ran out of time.
type budgetError struct{ budget time.Duration }

func (e *budgetError) Error() string {
	return fmt.Sprintf("exceeded its %v time budget", e.budget)
}

func (e *budgetError) Is(target error) bool { return target == ErrTimeout }
