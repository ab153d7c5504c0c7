package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// EngineConfig configures an Engine.
type EngineConfig struct {
	// CacheDir is where compiled plugins are cached on disk, so that a
	// restart skips the second-long cold compile of a Go plugin. "" keeps
	// the cache in memory only.
	CacheDir string
	// Metrics, when set, receives the calls, errors, latencies and pool
	// sizes of every plugin loaded by the Engine (see NewMetrics).
	Metrics *Metrics
}

// Engine compiles and runs plugins. It owns a wazero runtime with WASI
// (wasi_snapshot_preview1) instantiated once, which every plugin instance
// imports; one per distinct Options.MaxMemoryPages, so usually just one.
// Create one Engine per process and share it: plugins loaded from the same
// bytes share compiled code. It is safe for concurrent use.
type Engine struct {
	cache   wazero.CompilationCache
	disk    *diskCache // the cache's signed directory; nil: in memory
	metrics *Metrics   // nil: none

	mu       sync.Mutex
	closed   bool
	runtimes map[uint32]wazero.Runtime // by memory limit in pages
	compiled map[compiledKey]*compiledEntry
	// idleCompiled lists the compiled entries no Plugin uses, oldest first.
	idleCompiled []compiledKey
}

// NewEngine creates an Engine with the runtime for the default memory limit.
func NewEngine(ctx context.Context, cfg EngineConfig) (*Engine, error) {
	cache, disk, err := sharedCache(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cache:    cache,
		disk:     disk,
		metrics:  cfg.Metrics,
		runtimes: make(map[uint32]wazero.Runtime),
		compiled: make(map[compiledKey]*compiledEntry),
	}
	if _, err := e.runtime(ctx, defaultMaxMemoryPages); err != nil {
		return nil, err
	}
	return e, nil
}

// errEngineClosed is returned by loads on a closed Engine.
var errEngineClosed = errors.New("engine is closed")

// runtime returns the wazero runtime whose instances may grow their memory
// to pages pages. wazero sets that limit per runtime, not per module, so each
// distinct Options.MaxMemoryPages gets its own runtime; all of them share the
// Engine's compilation cache, so compiled code is not duplicated.
func (e *Engine) runtime(ctx context.Context, pages uint32) (wazero.Runtime, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errEngineClosed
	}
	if rt, ok := e.runtimes[pages]; ok {
		return rt, nil
	}
	// Context-done checks are left off (the default): they made guest calls
	// 2-4x slower. Time budgets are enforced by the instrumentation that
	// Load adds to every plugin instead (internal/instrument), whose host side,
	// tick, every runtime provides.
	config := wazero.NewRuntimeConfig().
		WithCompilationCache(e.cache).
		WithMemoryLimitPages(pages)
	rt := wazero.NewRuntimeWithConfig(ctx, config)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateTick(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate %s: %w", instrument.TickModule, err)
	}
	e.runtimes[pages] = rt
	return rt, nil
}

// Close closes every plugin instance and releases the compiled plugins.
// Plugins loaded from the Engine fail every call afterwards.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	runtimes, compiled := e.runtimes, e.compiled
	e.runtimes, e.compiled, e.idleCompiled = nil, nil, nil
	for _, entry := range compiled {
		entry.closed = true
	}
	e.mu.Unlock()

	var errs []error
	for _, rt := range runtimes {
		errs = append(errs, rt.Close(ctx))
	}
	for _, entry := range compiled {
		entry.closeModule(ctx)
	}
	return errors.Join(errs...)
}
