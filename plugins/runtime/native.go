package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/runedge/runedge/plugins/abi"
)

// NativeHook is a hook implemented in Go and linked into the host. It
// returns an *InputError when the input is the client's fault, any other
// error when it is the hook's own.
type NativeHook func(in []byte) ([]byte, error)

// NativeHooks are the hooks of a native plugin; nil ones are not
// implemented.
type NativeHooks struct {
	MapRequest, MapResult, MapStream NativeHook
	// MapResultView, when set, is MapResult on the input as the host
	// holds it (Plugin.MapResult): read as abi.ResultInput.View gives it,
	// with no envelope written and parsed between. It must answer as
	// MapResult answers the envelope.
	MapResultView func(abi.ResultView) ([]byte, error)
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
	if hooks.MapResult != nil {
		p.viewResult = hooks.MapResultView
	}
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

// callNative is call for a native plugin, with the contract Call
// promises: a panic fails the call, not the process; an *InputError is the
// client's; anything else is a fault naming the plugin.
func (p *Plugin) callNative(h Hook, in []byte) (out []byte, err error) {
	defer p.recoverNative(h, &out, &err)
	out, err = p.native[h](in)
	return p.nativeResult(h, out, err)
}

// runView is callNative for the view hook (Plugin.MapResult).
func (p *Plugin) runView(v abi.ResultView) (out []byte, err error) {
	defer p.recoverNative(MapResult, &out, &err)
	out, err = p.viewResult(v)
	return p.nativeResult(MapResult, out, err)
}

// recoverNative turns a native hook's panic into a fault of that call.
func (p *Plugin) recoverNative(h Hook, out *[]byte, err *error) {
	if r := recover(); r != nil {
		*out, *err = nil, p.fault(h, fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
	}
}

// nativeResult applies Call's error contract to a native hook's answer.
func (p *Plugin) nativeResult(h Hook, out []byte, err error) ([]byte, error) {
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

// MapResult runs map_result on in. A native plugin with a view hook
// (NativeHooks.MapResultView: the built-in default) reads in's fields as
// in.View encodes them, so the envelope is neither written nor parsed;
// any other plugin is Called with in.AppendJSON. Either way the metrics,
// the input limit (on the view's bytes) and the errors are Call's.
func (p *Plugin) MapResult(ctx context.Context, in *abi.ResultInput) ([]byte, error) {
	if p.viewResult == nil {
		return p.Call(ctx, MapResult, in.AppendJSON(nil))
	}
	m := p.metrics.hook(MapResult)
	var start time.Time
	if m != nil {
		start = time.Now()
	}
	v, buf := in.View(nil)
	var out []byte
	var err error
	if len(buf) > p.opts.MaxInputBytes {
		err = p.fault(MapResult, fmt.Errorf("input of %d bytes exceeds the limit of %d", len(buf), p.opts.MaxInputBytes))
	} else {
		out, err = p.runView(v)
	}
	if m != nil {
		m.observe(start, err)
	}
	return out, err
}
