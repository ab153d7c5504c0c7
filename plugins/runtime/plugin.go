package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/runedge/runedge/plugins/abi"
)

// Options configure a Plugin. Zero fields take the defaults noted.
type Options struct {
	// Name is shown in errors and metrics, e.g. "chat". Default: the file's
	// base name without ".wasm" for Load, the name argument for LoadBytes.
	Name string
	// PoolSize is the most instances, and so concurrent calls, the plugin
	// may have. Default: GOMAXPROCS, as guest calls are CPU-bound.
	PoolSize int
	// MaxMemoryPages caps each instance's linear memory, in 64 KiB pages. A
	// guest that needs more faults. Default: 1024 (64 MiB).
	MaxMemoryPages uint32
	// MaxInputBytes caps the input of a call; a larger one faults without
	// reaching the guest. A guest call cannot be preempted and stalls the
	// host's garbage collector, so its input size is what bounds it.
	// Default: 4 MiB.
	MaxInputBytes int
	// CallTimeout is each call's time budget. A call that runs longer is
	// aborted and fails with a Fault matching ErrTimeout; its instance is
	// discarded. The deadline is checked every few hundred microseconds of
	// guest work, so a call may overrun it by that much; a loop that calls
	// no function is only stopped after instrument.MaxLoopSteps iterations (see
	// plugins/ABI.md, "Time budget"). Default (0): 250ms; negative: none.
	CallTimeout time.Duration
	// CallTimeoutPerMiB extends CallTimeout by this much per MiB of the
	// call's input: a mapping's work grows with its input, and a valid
	// request at the body limit must not run out of a budget sized for a
	// small one. Default (0): no extension.
	CallTimeoutPerMiB time.Duration
}

// Defaults for Options.
const (
	defaultMaxMemoryPages = 1024
	defaultMaxInputBytes  = 4 << 20
	defaultCallTimeout    = 250 * time.Millisecond
	maxMemoryPages        = 65536 // 4 GiB, the wasm32 limit
)

// withDefaults fills in zero fields; name is the default Name.
func (o Options) withDefaults(name string) (Options, error) {
	if o.Name == "" {
		o.Name = name
	}
	if o.PoolSize <= 0 {
		o.PoolSize = goruntime.GOMAXPROCS(0)
	}
	if o.MaxMemoryPages == 0 {
		o.MaxMemoryPages = defaultMaxMemoryPages
	}
	if o.MaxMemoryPages > maxMemoryPages {
		return o, fmt.Errorf("MaxMemoryPages %d exceeds the wasm32 limit of %d", o.MaxMemoryPages, maxMemoryPages)
	}
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = defaultMaxInputBytes
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = defaultCallTimeout
	}
	return o, nil
}

// setupBudget is the time budget of initialising an instance and of the
// checks Load runs: CallTimeout, but at least setupBudget; none when calls
// have none.
func (o Options) setupBudget() time.Duration {
	if o.CallTimeout < 0 {
		return o.CallTimeout
	}
	return max(o.CallTimeout, setupBudget)
}

// Plugin is a loaded plugin: a compiled module and a pool of its instances.
// It is safe for concurrent use.
type Plugin struct {
	name    string
	sha256  string
	version string
	hooks   int32
	opts    Options
	pool    *pool // nil for a native plugin
	native  [hookCount]NativeHook
	// viewRequest and viewResult are a native plugin's map_request and
	// map_result on the host's view of their input
	// (NativeHooks.MapRequestView, MapResultView), nil when it has none.
	viewRequest func(abi.RequestView) ([]byte, error)
	viewResult  func(abi.ResultView) ([]byte, error)
	resultJSON  bool // NativeHooks.MapResultJSON, with viewResult set
	// decodeRequest is the native plugin's NativeHooks.MapRequestDecoded
	// (nil: none).
	decodeRequest func(abi.RequestView) (abi.RequestOutput, bool)
	metrics       *pluginMetrics // nil: no metrics
}

// Name returns the plugin's name, as used in errors.
func (p *Plugin) Name() string { return p.name }

// SHA256 returns the hex SHA-256 of the plugin's wasm bytes, identifying the
// exact version loaded.
func (p *Plugin) SHA256() string { return p.sha256 }

// Version returns the version the plugin declares (export runedge_version),
// or "" when it declares none; the SHA-256 then identifies it.
func (p *Plugin) Version() string { return p.version }

// Has reports whether the plugin implements hook h.
func (p *Plugin) Has(h Hook) bool { return h.valid() && p.hooks&h.bit() != 0 }

// Stats describe a plugin's instance pool.
type Stats struct {
	Instances int // live instances, busy or idle
	Idle      int // instances waiting for a call
}

// Stats returns the current state of the instance pool.
func (p *Plugin) Stats() Stats {
	if p.pool == nil {
		return Stats{}
	}
	live, idle := p.pool.stats()
	return Stats{Instances: live, Idle: idle}
}

// Close closes the idle instances now; instances in use are closed when their
// call returns. Later calls fail with a Fault wrapping ErrClosed. The compiled
// module is released with the last instance. A native plugin holds nothing
// to release and keeps answering.
func (p *Plugin) Close(ctx context.Context) error {
	if p.pool == nil {
		return nil
	}
	p.pool.close(ctx)
	return nil
}

// Call runs hook h on in and returns the hook's output, which the caller
// owns. It waits for a free instance while all PoolSize are busy; if ctx ends
// first it returns ctx's error, wrapped. It returns an *InputError when the
// plugin rejected the input as invalid, and a *Fault for anything that is the
// plugin's fault, including running past Options.CallTimeout; the instance
// that faulted is closed, not reused.
//
// ctx bounds the wait for an instance but not the guest call, which its
// time budget bounds instead.
func (p *Plugin) Call(ctx context.Context, h Hook, in []byte) ([]byte, error) {
	m := p.metrics.hook(h)
	if m == nil {
		return p.call(ctx, h, in)
	}
	start := time.Now()
	out, err := p.call(ctx, h, in)
	m.observe(start, err)
	return out, err
}

// call is Call without metrics.
func (p *Plugin) call(ctx context.Context, h Hook, in []byte) ([]byte, error) {
	if !p.Has(h) {
		return nil, p.fault(h, fmt.Errorf("plugin does not implement %s", h))
	}
	if len(in) > p.opts.MaxInputBytes {
		return nil, p.fault(h, fmt.Errorf("input of %d bytes exceeds the limit of %d", len(in), p.opts.MaxInputBytes))
	}
	if p.pool == nil {
		return p.callNative(h, in)
	}
	if err := p.pool.wait(ctx); err != nil {
		return nil, fmt.Errorf("plugin %s: %s: waiting for an instance: %w", p.name, h, err)
	}
	inst, err := p.pool.take(ctx)
	if err != nil {
		return nil, p.fault(h, err)
	}
	status, out, err := inst.runHook(h, in, p.opts.budgetFor(len(in)))
	if err == nil {
		switch status {
		case abi.StatusOK:
			p.pool.put(ctx, inst)
			return out, nil
		case abi.StatusInvalid:
			if h == MapStream {
				// The reply has started: the client can no longer be told
				// its request was invalid.
				err = errors.New("status 1 (invalid input) from map_stream, whose reply has already started")
				break
			}
			var ie *InputError
			if ie, err = parseInputError(out); err == nil {
				p.pool.put(ctx, inst)
				return nil, ie
			}
		case abi.StatusFailed:
			err = fmt.Errorf("internal error: %s", truncate(out, maxGuestMessage))
		default:
			err = fmt.Errorf("invalid status %d", status)
		}
	}
	p.pool.discard(ctx, inst)
	return nil, p.fault(h, err)
}

// Warm makes sure the plugin has at least n instances (at most PoolSize),
// instantiating the missing ones now rather than on the first calls that
// need them, which would each wait milliseconds. Meant for a plugin about to
// take traffic, such as the new version in a swap: while it runs, Warm holds
// the instances it counts, so calls may wait.
func (p *Plugin) Warm(ctx context.Context, n int) error {
	if p.pool == nil {
		return nil
	}
	n = min(n, p.opts.PoolSize)
	held := make([]*instance, 0, max(n, 0))
	defer func() {
		for _, inst := range held {
			p.pool.put(ctx, inst)
		}
	}()
	for len(held) < n {
		if err := p.pool.wait(ctx); err != nil {
			return fmt.Errorf("plugin %s: warm: %w", p.name, err)
		}
		inst, err := p.pool.take(ctx)
		if err != nil {
			return fmt.Errorf("plugin %s: warm: %w", p.name, err)
		}
		held = append(held, inst)
	}
	return nil
}

// fault wraps err, the cause of a failed call of hook h, as a Fault.
func (p *Plugin) fault(h Hook, err error) *Fault {
	return &Fault{Plugin: p.name, Hook: h.String(), Err: err}
}

// maxGuestMessage caps how much of a guest's error message ends up in errors.
const maxGuestMessage = 1 << 10

// truncate returns the first n bytes of b as valid UTF-8, marking a cut.
func truncate(b []byte, n int) string {
	suffix := ""
	if len(b) > n {
		b, suffix = b[:n], "..."
	}
	return strings.ToValidUTF8(string(b), "\ufffd") + suffix
}

// budgetFor is the time budget of a call with n bytes of input.
func (o Options) budgetFor(n int) time.Duration {
	if o.CallTimeout < 0 || o.CallTimeoutPerMiB <= 0 {
		return o.CallTimeout
	}
	return o.CallTimeout + time.Duration(int64(o.CallTimeoutPerMiB)*int64(n)>>20)
}
