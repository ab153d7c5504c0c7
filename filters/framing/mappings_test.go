package framing

import (
	"context"
	"sync"
	"testing"

	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/runtime"
)

// defaultMapping is one build of the default mapping: the SDK and golden
// suites run against the built-in native one and its WebAssembly build,
// which must give clients the same bytes.
type defaultMapping struct {
	name string
	load func(testing.TB) *runtime.Plugin
}

var (
	mappingEngine struct {
		once sync.Once
		e    *runtime.Engine
		err  error
	}
	defaultMappings = []defaultMapping{
		{"native", func(tb testing.TB) *runtime.Plugin {
			p, err := native.Load(engine(tb), runtime.Options{})
			if err != nil {
				tb.Fatal(err)
			}
			return p
		}},
		{"wasm", wasmDefault},
	}
)

// engine is the test binary's plugin engine, on the machine-wide cache.
func engine(tb testing.TB) *runtime.Engine {
	tb.Helper()
	mappingEngine.once.Do(func() {
		mappingEngine.e, mappingEngine.err = runtime.NewEngine(context.Background(), runtime.EngineConfig{CacheDir: plugintest.CacheDir(tb)})
	})
	if mappingEngine.err != nil {
		tb.Fatal(mappingEngine.err)
	}
	return mappingEngine.e
}

// wasmDefault is plugins/openai built from source and loaded once per test
// binary.
var wasmDefault = func() func(testing.TB) *runtime.Plugin {
	var once sync.Once
	var p *runtime.Plugin
	var err error
	return func(tb testing.TB) *runtime.Plugin {
		tb.Helper()
		e := engine(tb)
		path := plugintest.Build(tb, "github.com/runedge/runedge/plugins/openai")
		once.Do(func() { p, err = e.Load(context.Background(), path, runtime.Options{PoolSize: 1, CallTimeout: -1}) })
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
}()

// eachMapping runs test once per build of the default mapping, as subtests.
func eachMapping(t *testing.T, test func(t *testing.T, p *runtime.Plugin)) {
	for _, m := range defaultMappings {
		t.Run(m.name, func(t *testing.T) { test(t, m.load(t)) })
	}
}
