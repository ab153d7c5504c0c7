package runtime

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero"
)

// compiledKey identifies a compiled plugin within an Engine: the same bytes
// compiled for runtimes with different memory limits are distinct modules.
type compiledKey struct {
	sum   [32]byte
	pages uint32
}

// compiledEntry is a compiled module shared by the Plugins of one Engine
// loaded from the same bytes, such as the old and new version during a swap
// that changed nothing, or one plugin loaded twice.
type compiledEntry struct {
	ready chan struct{} // closed once mod or err is set
	mod   wazero.CompiledModule
	err   error

	// Guarded by Engine.mu.
	refs   int
	closed bool // set when the entry left the Engine's map
	once   sync.Once
}

// compile returns the module compiled from wasm for rt, compiling it unless
// an earlier Load did, and a release func to call once no instance of it is
// left. Concurrent loads of the same bytes wait for one compilation: wazero
// advises against compiling one module in parallel.
func (e *Engine) compile(ctx context.Context, rt wazero.Runtime, key compiledKey, wasm []byte) (wazero.CompiledModule, func(), error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, nil, errEngineClosed
	}
	entry, ok := e.compiled[key]
	if !ok {
		entry = &compiledEntry{ready: make(chan struct{})}
		e.compiled[key] = entry
	}
	entry.refs++
	e.mu.Unlock()

	if !ok {
		entry.mod, entry.err = rt.CompileModule(ctx, wasm)
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

// release drops one reference to entry and, with the last one, forgets and
// closes its module. A failed compilation is forgotten too, so that a later
// Load tries again.
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
	entry.closed = true
	delete(e.compiled, key)
	e.mu.Unlock()
	entry.closeModule(ctx)
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
