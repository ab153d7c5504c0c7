package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
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
	// MapRequestView and MapResultView, when set, are MapRequest and
	// MapResult on the input as the host holds it (Plugin.MapRequest,
	// Plugin.MapResult): read as abi.RequestInput.View and
	// abi.ResultInput.View give it, with no envelope written and parsed
	// between. Each must answer as its hook answers the envelope.
	//
	// A hook's output belongs to the caller once returned: the host reads
	// a map_request output's strings in place (abi.DecodeRequestOutput),
	// so a hook must not keep it to reuse. MapResultView's view is the
	// hook's during its call only: the host writes the next result's view
	// into the same buffer, so neither its output nor its error may
	// point into the view.
	MapRequestView func(abi.RequestView) ([]byte, error)
	MapResultView  func(abi.ResultView) ([]byte, error)
	// MapRequestDecoded, when set beside MapRequestView, is
	// MapRequestView with its output decoded (abi.DecodeNativeRequestOutput)
	// for the inputs it takes (ok true), without the output written and
	// read back; it declines the others, and every input MapRequestView
	// refuses, which then go to MapRequestView (Plugin.MapRequestNative).
	MapRequestDecoded func(abi.RequestView) (o abi.RequestOutput, ok bool)
	// MapResultJSON says that MapResultView's output is one JSON object
	// for every input it answers (the built-in default's, fuzzed), so the
	// host only compacts it (abi.CompactResult) where it validates any
	// other plugin's (abi.NormalizeResult; Plugin.ResultIsJSON).
	MapResultJSON bool
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
	if hooks.MapRequest != nil {
		p.viewRequest = hooks.MapRequestView
		if p.viewRequest != nil {
			p.decodeRequest = hooks.MapRequestDecoded
		}
	}
	if hooks.MapResult != nil {
		p.viewResult = hooks.MapResultView
		p.resultJSON = p.viewResult != nil && hooks.MapResultJSON
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

// runFn is callNative for a view hook's call.
func (p *Plugin) runFn(h Hook, fn func() ([]byte, error)) (out []byte, err error) {
	defer p.recoverNative(h, &out, &err)
	out, err = fn()
	return p.nativeResult(h, out, err)
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

// MapRequest runs map_request on in, as MapResult runs map_result: a
// native plugin with a view hook reads in.View (the body not copied, nor
// skipped over before it is read), any other is Called with in.AppendJSON.
// The input limit applies to the view's bytes and the body.
func (p *Plugin) MapRequest(ctx context.Context, in *abi.RequestInput) ([]byte, error) {
	if p.viewRequest == nil {
		return p.Call(ctx, MapRequest, in.AppendJSON(nil))
	}
	v, buf := in.View(nil)
	return p.viewed(MapRequest, len(buf)+len(in.Body), func() ([]byte, error) { return p.viewRequest(v) })
}

// MapRequestNative is MapRequest for the host's own decoding of the
// output: a native plugin with a decoding hook (NativeHooks.MapRequestDecoded:
// the built-in default) returns the decoded request for the inputs that
// hook takes, and out nil; for the others, and for any other plugin, out
// is MapRequest's output, to be decoded by the caller. One call either
// way, in the metrics, the input limit and the errors.
func (p *Plugin) MapRequestNative(ctx context.Context, in *abi.RequestInput) (o abi.RequestOutput, out []byte, err error) {
	if p.decodeRequest == nil {
		out, err = p.MapRequest(ctx, in)
		return o, out, err
	}
	v, buf := in.View(nil)
	out, err = p.viewed(MapRequest, len(buf)+len(in.Body), func() ([]byte, error) {
		var ok bool
		if o, ok = p.decodeRequest(v); ok {
			return nil, nil
		}
		o = abi.RequestOutput{}
		out, err := p.viewRequest(v)
		if err == nil && out == nil {
			out = []byte{} // an output, if an empty one: the caller decodes it
		}
		return out, err
	})
	return o, out, err
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
	bp := viewBufs.Get().(*[]byte)
	v, buf := in.View(*bp)
	out, err := p.viewed(MapResult, len(buf), func() ([]byte, error) { return p.viewResult(v) })
	if cap(buf) <= maxPooledView {
		*bp = buf[:0]
		viewBufs.Put(bp)
	}
	return out, err
}

// ResultIsJSON reports whether MapResult's output is one JSON object by
// construction (NativeHooks.MapResultJSON), which its caller need not
// validate again.
func (p *Plugin) ResultIsJSON() bool { return p.resultJSON }

// viewBufs holds the buffers MapResult writes its views into, which a
// hook reads during its call only (NativeHooks): about 400 bytes a small
// reply that were allocated per result. One over maxPooledView (a long
// answer's text) is let go.
var viewBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledView = 64 << 10

// viewed runs a view hook's call (run) under Call's contract: counted in
// the metrics, refused as a fault when its input (n bytes) is over the
// limit, a panic or an error handled as callNative handles them.
func (p *Plugin) viewed(h Hook, n int, run func() ([]byte, error)) (out []byte, err error) {
	m := p.metrics.hook(h)
	var start time.Time
	if m != nil {
		start = time.Now()
	}
	if n > p.opts.MaxInputBytes {
		err = p.fault(h, fmt.Errorf("input of %d bytes exceeds the limit of %d", n, p.opts.MaxInputBytes))
	} else {
		out, err = p.runFn(h, run)
	}
	if m != nil {
		m.observe(start, err)
	}
	return out, err
}
