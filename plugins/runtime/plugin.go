package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
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
}

// Defaults for Options.
const (
	defaultMaxMemoryPages = 1024
	defaultMaxInputBytes  = 4 << 20
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
	return o, nil
}

// Plugin is a loaded plugin: a compiled module and a pool of its instances.
// It is safe for concurrent use.
type Plugin struct {
	name   string
	sha256 string
	hooks  int32
	opts   Options
	pool   *pool
}

// Name returns the plugin's name, as used in errors.
func (p *Plugin) Name() string { return p.name }

// SHA256 returns the hex SHA-256 of the plugin's wasm bytes, identifying the
// exact version loaded.
func (p *Plugin) SHA256() string { return p.sha256 }

// Has reports whether the plugin implements hook h.
func (p *Plugin) Has(h Hook) bool { return h.valid() && p.hooks&h.bit() != 0 }

// Stats describe a plugin's instance pool.
type Stats struct {
	Instances int // live instances, busy or idle
	Idle      int // instances waiting for a call
}

// Stats returns the current state of the instance pool.
func (p *Plugin) Stats() Stats {
	live, idle := p.pool.stats()
	return Stats{Instances: live, Idle: idle}
}

// Close closes the idle instances now; instances in use are closed when their
// call returns. Later calls fail with a Fault wrapping ErrClosed. The compiled
// module is released with the last instance.
func (p *Plugin) Close(ctx context.Context) error {
	p.pool.close(ctx)
	return nil
}

// Call runs hook h on in and returns the hook's output, which the caller
// owns. It waits for a free instance while all PoolSize are busy; if ctx ends
// first it returns ctx's error, wrapped. It returns an *InputError when the
// plugin rejected the input as invalid, and a *Fault for anything that is the
// plugin's fault; the instance that faulted is closed, not reused.
//
// ctx bounds the wait for an instance but does not interrupt a running guest
// call: checking it inside guest code made calls several times slower.
func (p *Plugin) Call(ctx context.Context, h Hook, in []byte) ([]byte, error) {
	if !p.Has(h) {
		return nil, p.fault(h, fmt.Errorf("plugin does not implement %s", h))
	}
	if len(in) > p.opts.MaxInputBytes {
		return nil, p.fault(h, fmt.Errorf("input of %d bytes exceeds the limit of %d", len(in), p.opts.MaxInputBytes))
	}
	if err := p.pool.wait(ctx); err != nil {
		return nil, fmt.Errorf("plugin %s: %s: waiting for an instance: %w", p.name, h, err)
	}
	inst, err := p.pool.take(ctx)
	if err != nil {
		return nil, p.fault(h, err)
	}
	status, out, err := inst.runHook(ctx, h, in)
	if err == nil {
		switch status {
		case statusOK:
			p.pool.put(ctx, inst)
			return out, nil
		case statusInvalid:
			var ie *InputError
			if ie, err = parseInputError(out); err == nil {
				p.pool.put(ctx, inst)
				return nil, ie
			}
		case statusInternal:
			err = fmt.Errorf("internal error: %s", truncate(out, maxGuestMessage))
		default:
			err = fmt.Errorf("invalid status %d", status)
		}
	}
	p.pool.discard(ctx, inst)
	return nil, p.fault(h, err)
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
