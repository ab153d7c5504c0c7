package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one instantiated plugin module. It runs one call at a time:
// the pool hands it to one caller at a time.
type instance struct {
	mod      api.Module
	mem      api.Memory
	alloc    api.Function
	output   api.Function
	selfTest api.Function            // nil when not exported
	hooks    [hookCount]api.Function // indexed by Hook; nil when not exported
	stack    [2]uint64               // reused by every call to avoid allocating
	stderr   *stderrHead
	// fuel is the counter internal/instrument adds; nil only for a module that
	// was not instrumented, as BenchmarkBudget makes to compare.
	fuel api.Global
	// budget is the deadline of the running call, which tick checks.
	budget budget
	// ctx is the context of every guest call: it carries budget to tick.
	// A guest call is bounded by its budget, not by the caller's context,
	// which wazero would only check with its slow context-done checks.
	ctx context.Context
}

// instantiate makes a new instance of cm, running its initialisation within
// setup, a time budget (<= 0: none). config carries the settings shared by
// every instance of the plugin; each instance gets its own stderr.
func instantiate(rt wazero.Runtime, cm wazero.CompiledModule, config wazero.ModuleConfig, setup time.Duration) (*instance, error) {
	inst := &instance{stderr: &stderrHead{}}
	// The budget is the outermost value: tick looks it up on every check.
	inst.ctx = context.WithValue(experimental.WithMemoryAllocator(context.Background(), memoryAllocator), budgetKey{}, &inst.budget)
	inst.budget.start(setup)
	mod, err := rt.InstantiateModule(inst.ctx, cm, withHostBudget(config, &inst.budget, inst.stderr))
	if err != nil {
		if inst.budget.expired {
			err = &budgetError{setup}
		}
		if line := inst.stderr.firstLine(); line != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, line)
		}
		return nil, err
	}
	inst.mod = mod
	inst.mem = mod.ExportedMemory(abi.ExportMemory)
	inst.alloc = mod.ExportedFunction(abi.ExportAlloc)
	inst.output = mod.ExportedFunction(abi.ExportOutput)
	inst.selfTest = mod.ExportedFunction(abi.ExportSelfTest)
	inst.fuel = mod.ExportedGlobal(instrument.FuelExport)
	for h := range Hook(hookCount) {
		inst.hooks[h] = mod.ExportedFunction(h.export())
	}
	if inst.mem == nil || inst.alloc == nil || inst.output == nil {
		// Load checks the compiled module's exports, so this is a bug.
		_ = mod.Close(inst.ctx)
		return nil, errors.New("instance lacks a required export")
	}
	return inst, nil
}

// close releases the instance's memory. An instance that trapped or exited
// may be closed already; closing again is harmless.
func (i *instance) close(ctx context.Context) {
	_ = i.mod.Close(context.WithoutCancel(ctx))
}

// start begins a call (one or more guest functions) with time budget d
// (<= 0: none).
func (i *instance) start(d time.Duration) {
	i.stderr.reset()
	i.budget.start(d)
}

// call calls the guest function fn, exported as name, with i.stack. When the
// call ran out of time, the error is a *budgetError for d, the budget given
// to start.
func (i *instance) call(fn api.Function, name string, d time.Duration) error {
	err := fn.CallWithStack(i.ctx, i.stack[:])
	switch {
	case err == nil:
		return nil
	case i.budget.expired:
		return &budgetError{d}
	case i.fuel != nil && api.DecodeI32(i.fuel.Get()) <= -instrument.MaxLoopSteps:
		// The trap of a loop that ran instrument.MaxLoopSteps without entering a
		// function, and so without its deadline being checked.
		if i.budget.passed() {
			return &budgetError{d}
		}
		return fmt.Errorf("%s: stopped after %d loop iterations without a function call", name, instrument.MaxLoopSteps)
	}
	return i.callError(name, err)
}

// callU64 calls a guest function that takes no arguments, within budget d,
// and returns its result as a uint64 (so also an i32, zero-extended).
func (i *instance) callU64(name string, d time.Duration) (uint64, error) {
	fn := i.mod.ExportedFunction(name)
	if fn == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	i.start(d)
	if err := i.call(fn, name, d); err != nil {
		return 0, err
	}
	return i.stack[0], nil
}

// runHook writes in into the guest, calls hook h within budget d and returns
// its status and a copy of its output. A non-nil error means the guest
// misbehaved or ran out of time.
func (i *instance) runHook(h Hook, in []byte, d time.Duration) (uint32, []byte, error) {
	fn := i.hooks[h]
	if fn == nil {
		return 0, nil, fmt.Errorf("no export %s", h.export())
	}
	i.start(d)
	size := uint32(len(in))
	i.stack[0] = api.EncodeU32(size)
	if err := i.call(i.alloc, abi.ExportAlloc, d); err != nil {
		return 0, nil, err
	}
	ptr := api.DecodeU32(i.stack[0])
	if !i.mem.Write(ptr, in) {
		return 0, nil, i.rangeError(abi.ExportAlloc, ptr, size)
	}
	i.stack[0], i.stack[1] = api.EncodeU32(ptr), api.EncodeU32(size)
	if err := i.call(fn, h.export(), d); err != nil {
		return 0, nil, err
	}
	status := api.DecodeU32(i.stack[0])
	out, err := i.readOutput(d)
	return status, out, err
}

// runSelfTest calls runedge_self_test within budget d and returns its status
// and output.
func (i *instance) runSelfTest(d time.Duration) (uint32, []byte, error) {
	if i.selfTest == nil {
		return 0, nil, fmt.Errorf("no export %s", abi.ExportSelfTest)
	}
	i.start(d)
	if err := i.call(i.selfTest, abi.ExportSelfTest, d); err != nil {
		return 0, nil, err
	}
	status := api.DecodeU32(i.stack[0])
	out, err := i.readOutput(d)
	return status, out, err
}

// readOutput copies the output of the last hook call out of guest memory: the
// guest may reuse that memory as soon as it is called again.
func (i *instance) readOutput(d time.Duration) ([]byte, error) {
	if err := i.call(i.output, abi.ExportOutput, d); err != nil {
		return nil, err
	}
	return i.readPtrLen(abi.ExportOutput, i.stack[0])
}

// readPtrLen copies the bytes that v, (ptr << 32) | len as returned by
// runedge_output and runedge_version, points at; name is the function that
// returned v.
func (i *instance) readPtrLen(name string, v uint64) ([]byte, error) {
	ptr, size := uint32(v>>32), uint32(v)
	if size == 0 {
		return nil, nil
	}
	view, ok := i.mem.Read(ptr, size)
	if !ok {
		return nil, i.rangeError(name, ptr, size)
	}
	return bytes.Clone(view), nil
}

// callError describes a failed guest call, adding what a dying guest printed
// to stderr.
func (i *instance) callError(name string, err error) error {
	ce := &callError{export: name, err: err, stderr: i.stderr.firstLine()}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		ce.summary = fmt.Sprintf("guest exited with code %d", exit.ExitCode())
	} else {
		ce.summary, ce.detail, _ = strings.Cut(err.Error(), "\n")
	}
	return ce
}

// callError is a failed guest call. Its message starts with a one-line
// summary that includes the guest's last words on stderr (for a Go guest, the
// panic or "out of memory"), and goes on with the detail, such as wazero's
// wasm stack trace; Fault.Error shows only the summary.
type callError struct {
	export  string // the guest function called
	err     error  // as returned by wazero
	summary string // first line
	detail  string // further lines
	stderr  string // first line the guest wrote to stderr during the call
}

func (e *callError) Error() string {
	msg := e.export + ": " + e.summary
	if e.stderr != "" {
		msg += " (stderr: " + e.stderr + ")"
	}
	if e.detail != "" {
		msg += "\n" + e.detail
	}
	return msg
}

func (e *callError) Unwrap() error { return e.err }

// rangeError reports a guest pointer whose range lies outside its memory.
func (i *instance) rangeError(name string, ptr, size uint32) error {
	return fmt.Errorf("%s: range [%d, %d) is outside the guest's %d bytes of memory",
		name, ptr, uint64(ptr)+uint64(size), i.mem.Size())
}
