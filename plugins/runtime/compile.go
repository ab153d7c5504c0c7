package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
)

// keepIdleCompiled is how many compiled modules no Plugin uses an Engine
// keeps. Decoding and compiling, even from the disk cache, costs tens of
// milliseconds (seconds cold), so keeping the latest few makes a swap back to
// the previous version, or the next test server loading the same plugin,
// instant; keeping all would leak every version ever swapped in. A compiled
// Go plugin takes about 10 MB.
const keepIdleCompiled = 2

// compiledKey identifies a compiled plugin within an Engine: the same bytes
// compiled for runtimes with different memory limits are distinct modules.
type compiledKey struct {
	sum   [32]byte
	pages uint32
}

// compiledEntry is a compiled module shared by the Plugins of one Engine
// loaded from the same bytes, such as the old and new version during a swap
// that changed nothing, or one plugin loaded by many test servers.
type compiledEntry struct {
	ready chan struct{} // closed once mod or err is set
	mod   wazero.CompiledModule
	err   error
	once  sync.Once // guards closing mod

	// Guarded by Engine.mu.
	refs   int  // Plugins using mod, or loads waiting for it
	closed bool // set when the entry left the Engine
}

// compile returns the module compiled from wasm, instrumented, for rt, compiling it unless
// an earlier Load did, and a release func to call once no instance of it is
// left. Concurrent loads of the same bytes wait for one compilation: wazero
// advises against compiling one module in parallel.
func (e *Engine) compile(ctx context.Context, rt wazero.Runtime, key compiledKey, wasm []byte) (wazero.CompiledModule, func(), error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, nil, errEngineClosed
	}
	entry, found := e.compiled[key]
	if !found {
		entry = &compiledEntry{ready: make(chan struct{})}
		e.compiled[key] = entry
	}
	if entry.refs == 0 {
		e.idleCompiled = slices.DeleteFunc(e.idleCompiled, func(k compiledKey) bool { return k == key })
	}
	entry.refs++
	e.mu.Unlock()

	if !found {
		entry.mod, entry.err = e.compileInstrumented(ctx, rt, wasm)
		close(entry.ready)
	} else {
		select {
		case <-entry.ready:
		case <-ctx.Done():
			e.release(ctx, key, entry)
			return nil, nil, ctx.Err()
		}
	}
	if entry.err != nil {
		err := entry.err
		e.release(ctx, key, entry)
		return nil, nil, err
	}
	var once sync.Once
	release := func() { once.Do(func() { e.release(context.Background(), key, entry) }) }
	return entry.mod, release, nil
}

// compileInstrumented instruments wasm (see internal/instrument) and compiles it.
// With a cache directory, unsigned entries are deleted before wazero looks
// there and the ones it wrote are signed after (cachedir.go).
func (e *Engine) compileInstrumented(ctx context.Context, rt wazero.Runtime, wasm []byte) (wazero.CompiledModule, error) {
	instrumented, err := instrument.Module(wasm)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	if e.disk != nil {
		if err := e.disk.verify(); err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
	}
	mod, err := rt.CompileModule(ctx, instrumented)
	if err == nil && e.disk != nil {
		if serr := e.disk.sign(); serr != nil {
			_ = mod.Close(ctx)
			return nil, fmt.Errorf("compilation cache: %w", serr)
		}
	}
	return mod, err
}

// release drops one reference to entry. With the last one the entry joins the
// idle ones, and the oldest idle entry beyond keepIdleCompiled is closed. A
// failed compilation is dropped at once, so that a later Load tries again.
func (e *Engine) release(ctx context.Context, key compiledKey, entry *compiledEntry) {
	e.mu.Lock()
	if entry.closed {
		e.mu.Unlock()
		return
	}
	entry.refs--
	if entry.refs > 0 {
		e.mu.Unlock()
		return
	}
	var drop []*compiledEntry
	if entry.err != nil {
		drop = append(drop, e.forgetCompiled(key))
	} else {
		e.idleCompiled = append(e.idleCompiled, key)
		for len(e.idleCompiled) > keepIdleCompiled {
			oldest := e.idleCompiled[0]
			e.idleCompiled = e.idleCompiled[1:]
			drop = append(drop, e.forgetCompiled(oldest))
		}
	}
	e.mu.Unlock()
	for _, d := range drop {
		d.closeModule(ctx)
	}
}

// forgetCompiled removes the entry for key and returns it for closing.
// e.mu must be held.
func (e *Engine) forgetCompiled(key compiledKey) *compiledEntry {
	entry := e.compiled[key]
	entry.closed = true
	delete(e.compiled, key)
	return entry
}

// closeModule closes the compiled module once. wazero counts references per
// module across every Engine sharing a compilation cache, so a second Close
// would drop another Engine's reference.
func (c *compiledEntry) closeModule(ctx context.Context) {
	c.once.Do(func() {
		<-c.ready
		if c.mod != nil {
			_ = c.mod.Close(ctx)
		}
	})
}
