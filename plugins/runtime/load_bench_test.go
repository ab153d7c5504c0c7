package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
)

// The one-off costs of a plugin, for the default plugin (plugins/openai,
// a standard-Go guest): what a start-up or a swap pays before traffic, and
// what a pool pays to grow. RATIONALE.md ("What a wazero plugin costs")
// quotes these; run them with -benchtime=3x, each iteration is long.

// defaultWasm builds the default plugin and returns its bytes.
func defaultWasm(b *testing.B) []byte {
	b.Helper()
	wasm, err := os.ReadFile(plugintest.Build(b, "../openai"))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}

// forgetCache drops the process's in-memory copy of the compilation cache
// of dir, so that the next Engine on dir reads from disk as a new process
// would.
func forgetCache(dir string) {
	abs, _ := filepath.Abs(dir)
	sharedCaches.Lock()
	delete(sharedCaches.byDir, abs)
	sharedCaches.Unlock()
}

// loadOnce makes an Engine on dir, loads wasm (compile or cache hit, one
// instance, ABI checks, self-test) and closes both.
func loadOnce(b *testing.B, dir string, wasm []byte) {
	ctx := context.Background()
	e, err := NewEngine(ctx, EngineConfig{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	p, err := e.LoadBytes(ctx, "openai", wasm, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p.Close(ctx)
	e.Close(ctx)
}

// BenchmarkLoad: cold is a first start (an empty cache directory: the
// module is compiled); disk-cache a restart (the compiled code read from
// the cache directory).
func BenchmarkLoad(b *testing.B) {
	wasm := defaultWasm(b)
	b.Run("cold", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			dir := b.TempDir()
			loadOnce(b, dir, wasm)
			forgetCache(dir)
		}
	})
	b.Run("disk-cache", func(b *testing.B) {
		dir := b.TempDir()
		loadOnce(b, dir, wasm) // fills the directory
		forgetCache(dir)
		defer reportCPU(b)()
		for b.Loop() {
			loadOnce(b, dir, wasm)
			forgetCache(dir)
		}
	})
}

// BenchmarkInstantiate measures one more instance of a loaded plugin
// (instantiation and _initialize), as a pool pays when it grows. Instances
// are 5-10 MiB each and a heap of many makes each next one slower (GC), so
// every 4 the plugin is reloaded, off the clock.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b)
	wasm := defaultWasm(b)
	const most = 4
	var p *Plugin
	n := most
	defer func() {
		if p != nil {
			p.Close(ctx)
		}
	}()
	b.ResetTimer()
	for range b.N { // not b.Loop: the reloads must be off the clock
		if n == most {
			b.StopTimer()
			if p != nil {
				p.Close(ctx)
			}
			var err error
			if p, err = e.LoadBytes(ctx, "openai", wasm, Options{PoolSize: most}); err != nil {
				b.Fatal(err)
			}
			n = 1 // Load made one
			b.StartTimer()
		}
		n++
		if err := p.Warm(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
}
