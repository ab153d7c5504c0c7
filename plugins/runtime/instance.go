package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
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
}

// instantiate makes a new instance of cm. config carries the settings shared
// by every instance of the plugin; each instance gets its own stderr.
func instantiate(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, config wazero.ModuleConfig) (*instance, error) {
	stderr := &stderrHead{}
	mod, err := rt.InstantiateModule(ctx, cm, config.WithStderr(stderr))
	if err != nil {
		if line := stderr.firstLine(); line != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, line)
		}
		return nil, err
	}
	inst := &instance{
		mod:      mod,
		mem:      mod.ExportedMemory(exportMemory),
		alloc:    mod.ExportedFunction(exportAlloc),
		output:   mod.ExportedFunction(exportOutput),
		selfTest: mod.ExportedFunction(exportSelfTest),
		stderr:   stderr,
	}
	for h := range Hook(hookCount) {
		inst.hooks[h] = mod.ExportedFunction(h.export())
	}
	if inst.mem == nil || inst.alloc == nil || inst.output == nil {
		// Load checks the compiled module's exports, so this is a bug.
		_ = mod.Close(ctx)
		return nil, errors.New("instance lacks a required export")
	}
	return inst, nil
}

// close releases the instance's memory. An instance that trapped or exited
// may be closed already; closing again is harmless.
func (i *instance) close(ctx context.Context) {
	_ = i.mod.Close(context.WithoutCancel(ctx))
}

// callI32 calls a guest function that takes no arguments and returns an i32,
// like runedge_abi_version.
func (i *instance) callI32(ctx context.Context, name string) (int32, error) {
	fn := i.mod.ExportedFunction(name)
	if fn == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	i.stderr.reset()
	if err := fn.CallWithStack(ctx, i.stack[:]); err != nil {
		return 0, i.callError(name, err)
	}
	return api.DecodeI32(i.stack[0]), nil
}

// runHook writes in into the guest, calls hook h and returns its status and a
// copy of its output. A non-nil error means the guest misbehaved.
func (i *instance) runHook(ctx context.Context, h Hook, in []byte) (uint32, []byte, error) {
	fn := i.hooks[h]
	if fn == nil {
		return 0, nil, fmt.Errorf("no export %s", h.export())
	}
	i.stderr.reset()
	size := uint32(len(in))
	i.stack[0] = api.EncodeU32(size)
	if err := i.alloc.CallWithStack(ctx, i.stack[:]); err != nil {
		return 0, nil, i.callError(exportAlloc, err)
	}
	ptr := api.DecodeU32(i.stack[0])
	if !i.mem.Write(ptr, in) {
		return 0, nil, i.rangeError(exportAlloc, ptr, size)
	}
	i.stack[0], i.stack[1] = api.EncodeU32(ptr), api.EncodeU32(size)
	if err := fn.CallWithStack(ctx, i.stack[:]); err != nil {
		return 0, nil, i.callError(h.export(), err)
	}
	status := api.DecodeU32(i.stack[0])
	out, err := i.readOutput(ctx)
	return status, out, err
}

// runSelfTest calls runedge_self_test and returns its status and output.
func (i *instance) runSelfTest(ctx context.Context) (uint32, []byte, error) {
	if i.selfTest == nil {
		return 0, nil, fmt.Errorf("no export %s", exportSelfTest)
	}
	i.stderr.reset()
	if err := i.selfTest.CallWithStack(ctx, i.stack[:]); err != nil {
		return 0, nil, i.callError(exportSelfTest, err)
	}
	status := api.DecodeU32(i.stack[0])
	out, err := i.readOutput(ctx)
	return status, out, err
}

// readOutput copies the output of the last hook call out of guest memory: the
// guest may reuse that memory as soon as it is called again.
func (i *instance) readOutput(ctx context.Context) ([]byte, error) {
	if err := i.output.CallWithStack(ctx, i.stack[:]); err != nil {
		return nil, i.callError(exportOutput, err)
	}
	ptr, size := uint32(i.stack[0]>>32), uint32(i.stack[0])
	if size == 0 {
		return nil, nil
	}
	view, ok := i.mem.Read(ptr, size)
	if !ok {
		return nil, i.rangeError(exportOutput, ptr, size)
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
