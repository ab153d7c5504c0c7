package runtime

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// NativeHook is a hook implemented in Go and linked into the host. It
// returns an *InputError when the input is the client's fault, any other
// error when it is the hook's own.
type NativeHook func(in []byte) ([]byte, error)

// NativeHooks are the hooks of a native plugin; nil ones are not
// implemented.
type NativeHooks struct {
	MapRequest, MapResult, MapStream NativeHook
}

// Native returns a Plugin whose hooks run as Go code in the host, with the
// same contract as a WebAssembly plugin's: Call returns an *InputError for
// a client fault and a *Fault (naming the plugin) for anything else,
// including a panic, which fails that call instead of the process. It has
// no instances, no time budget (its code is the host's own and cannot be
// interrupted; MaxInputBytes still bounds its input) and no SHA-256.
//
// It exists for the built-in default mapping (plugins/compat): the same
// code its WebAssembly build runs, about ten times cheaper natively, so
// that WebAssembly is paid only for plugins an operator swaps in
// (RATIONALE.md, "The default mapping runs natively").
func (e *Engine) Native(name, version string, hooks NativeHooks, opts Options) (*Plugin, error) {
	opts, err := opts.withDefaults(name)
	if err != nil {
		return nil, err
	}
	p := &Plugin{name: opts.Name, version: version, opts: opts}
	p.native = [hookCount]NativeHook{MapRequest: hooks.MapRequest, MapResult: hooks.MapResult, MapStream: hooks.MapStream}
	for h, fn := range p.native {
		if fn != nil {
			p.hooks |= Hook(h).bit()
		}
	}
	if p.hooks == 0 {
		return nil, errors.New("native plugin " + opts.Name + " implements no hook")
	}
	p.metrics = e.metrics.series(p)
	return p, nil
}

// IsNative reports whether p runs as Go code in the host (Engine.Native).
func (p *Plugin) IsNative() bool { return p.pool == nil }

// callNative is call for a native plugin.
func (p *Plugin) callNative(h Hook, in []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, p.fault(h, fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	out, err = p.native[h](in)
	if err == nil {
		return out, nil
	}
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		if h == MapStream {
			return nil, p.fault(h, errors.New("invalid input from map_stream, whose reply has already started"))
		}
		return nil, ie
	}
	return nil, p.fault(h, err)
}
