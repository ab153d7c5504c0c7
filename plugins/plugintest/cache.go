package plugintest

import (
	"os"
	"path/filepath"
	"testing"
)

// CacheDir returns a wazero compilation cache directory shared by every test
// binary on the machine, for runtime.EngineConfig.CacheDir. wazero keys its
// entries by module hash and wazero version and writes them atomically, so
// sharing is safe and a stale entry is never used.
func CacheDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "runedge-test-wazero-cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("plugintest: %v", err)
	}
	return dir
}
