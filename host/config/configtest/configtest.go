// Package configtest makes configurations for servers started by tests: all
// state in the test's temporary directory, the default mapping plugin built
// from source (never a stale .wasm), the machine-wide compilation cache, and
// the admin listener on a free port.
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
	wasm := plugintest.Build(tb, "github.com/runedge/runedge/plugins/openai")
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
	cfg.Chains[config.ChainChat] = config.Chain{MapRequest: wasm, Translate: wasm}
	cfg.Chains[config.ChainResponses] = config.Chain{MapRequest: wasm, Translate: wasm}
	return cfg
}
