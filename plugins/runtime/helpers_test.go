package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
)

// newEngine returns an Engine using the machine-wide test compilation cache,
// closed when the test ends.
func newEngine(tb testing.TB) *Engine {
	tb.Helper()
	e, err := NewEngine(context.Background(), EngineConfig{CacheDir: plugintest.CacheDir(tb)})
	if err != nil {
		tb.Fatalf("NewEngine: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			tb.Errorf("Engine.Close: %v", err)
		}
	})
	return e
}

// loadGo builds the Go test plugin in testdata/dir and loads it.
func loadGo(tb testing.TB, e *Engine, dir string, opts Options) *Plugin {
	tb.Helper()
	p, err := e.Load(context.Background(), plugintest.Build(tb, "./testdata/"+dir), opts)
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// loadRaw loads an assembled guest.
func loadRaw(tb testing.TB, e *Engine, g rawGuest, opts Options) *Plugin {
	tb.Helper()
	p, err := e.LoadBytes(context.Background(), "raw", g.wasm(), opts)
	if err != nil {
		tb.Fatalf("LoadBytes: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// wantFault fails the test unless err is a *Fault.
func wantFault(tb testing.TB, err error) *Fault {
	tb.Helper()
	var f *Fault
	if !errors.As(err, &f) {
		tb.Fatalf("got error %v (%T), want a *Fault", err, err)
	}
	return f
}

// wantStats fails the test unless p's pool is in the given state.
func wantStats(tb testing.TB, p *Plugin, want Stats) {
	tb.Helper()
	if got := p.Stats(); got != want {
		tb.Fatalf("Stats() = %+v, want %+v", got, want)
	}
}
