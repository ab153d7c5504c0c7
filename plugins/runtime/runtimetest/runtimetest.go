// Package runtimetest loads plugins the way the host does, for the tests of
// plugins: built from source (plugintest.Build), compiled with the
// machine-wide test cache, instantiated and self-tested by runtime.Load.
package runtimetest

import (
	"context"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/runtime"
)

// Load builds the plugin at pkg (an import path or a directory such as ".")
// and loads it with one instance; engine and plugin close when the test ends.
func Load(tb testing.TB, pkg string) *runtime.Plugin {
	tb.Helper()
	ctx := context.Background()
	e, err := runtime.NewEngine(ctx, runtime.EngineConfig{CacheDir: plugintest.CacheDir(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close(ctx) })
	p, err := e.Load(ctx, plugintest.Build(tb, pkg), runtime.Options{PoolSize: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close(ctx) })
	return p
}
