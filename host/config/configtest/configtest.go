// Package configtest makes configurations for servers started by tests: all
// state in the test's temporary directory, the built-in default mapping
// (native, as in production; Wasm switches to its WebAssembly build, built
// from source, never a stale .wasm), the machine-wide compilation cache,
// and the admin listener on a free port.
package configtest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
)

// New returns a valid configuration without tokens; the caller adds them.
func New(tb testing.TB) *config.Config {
	tb.Helper()
	cfg := config.Default()
	cfg.Dir = tb.TempDir()
	cfg.Store.Path = filepath.Join(cfg.Dir, "runs.db")
	cfg.Plugins.CacheDir = plugintest.CacheDir(tb)
	cfg.Plugins.StoreDir = filepath.Join(cfg.Dir, "plugins")
	cfg.Plugins.PoolSize = 2
	// The production budget (250 ms) is sized for a quiet host. Tests run
	// under -race on two shared cores, where a garbage collection or the
	// scheduler can hold one plugin call past it and fail a test about
	// something else (TestSwapUnderLoad did). Tests of the budget itself
	// set theirs (faults_test.go).
	cfg.Plugins.CallTimeout = config.Dur(5 * time.Second)
	cfg.Admin.Listen = "127.0.0.1:0"
	return cfg
}

// DefaultWasm returns the path of the default mapping's WebAssembly build
// (plugins/openai), built from source for this test binary.
func DefaultWasm(tb testing.TB) string {
	tb.Helper()
	return plugintest.Build(tb, "github.com/runedge/runedge/plugins/openai")
}

// Wasm makes every stage of cfg map with the default mapping's WebAssembly
// build instead of the native built-in, and returns the file's path.
func Wasm(tb testing.TB, cfg *config.Config) string {
	tb.Helper()
	wasm := DefaultWasm(tb)
	cfg.Chains[config.ChainChat] = config.Chain{MapRequest: wasm, Translate: wasm}
	cfg.Chains[config.ChainResponses] = config.Chain{MapRequest: wasm, Translate: wasm}
	return wasm
}

// Mappings are the two builds of the default mapping every golden and SDK
// suite runs against: "native" (the built-in, the production default) and
// "wasm" (its WebAssembly build, the reference of `runedge plugin check`).
// Each sets up cfg for its build.
var Mappings = []struct {
	Name  string
	Apply func(testing.TB, *config.Config)
}{
	{"native", func(testing.TB, *config.Config) {}},
	{"wasm", func(tb testing.TB, cfg *config.Config) { Wasm(tb, cfg) }},
}
