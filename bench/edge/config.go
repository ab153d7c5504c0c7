package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// writeRunedgeConfig writes the configuration of the runedge target name
// (store driver; mapping native, the built-in default, or wasm, its
// WebAssembly build for both endpoints) and returns its path. An empty
// upURL configures the offline provider, as `make run` does. extra is
// YAML appended to the file (-config-extra: e.g. a budget, to measure what
// admission with one costs).
func writeRunedgeConfig(dir, root, name, driver, mapping, addr, admin, upURL, pgEnv, cacheDir, extra string) (string, error) {
	sum := sha256.Sum256([]byte(benchToken))
	store := fmt.Sprintf("  driver: sqlite\n  path: %s\n", filepath.Join(dir, "runs-"+addr+".db"))
	if driver == "postgres" {
		store = "  driver: postgres\n  dsn_env: " + pgEnv + "\n"
	}
	plugin := "builtin:openai"
	switch mapping {
	case "native":
	case "wasm":
		plugin = filepath.Join(root, "plugins/build/openai.wasm")
	default:
		return "", fmt.Errorf("-mappings: unknown mapping %q (want native or wasm)", mapping)
	}
	provider := fmt.Sprintf("  kind: openai\n  openai:\n    base_url: %s/v1\n    api_key_env: BENCH_UPSTREAM_KEY\n    model: mock-model\n", upURL)
	if upURL == "" {
		provider = "  kind: offline\n"
	}
	cfg := fmt.Sprintf(`listen: %s
host:
  id: bench-%s
tokens:
  - name: bench
    hash: sha256:%s
    admin: true
store:
%sprovider:
%splugins:
  cache_dir: %s
  store_dir: %s
admin:
  listen: %q
chains:
  chat.completions: {map_request: %s, translate: %s}
  responses: {map_request: %s, translate: %s}
`, addr, name, hex.EncodeToString(sum[:]), store, provider, cacheDir, filepath.Join(dir, "plugins-"+name),
		cmp.Or(admin, "off"), plugin, plugin, plugin, plugin) + extra
	path := filepath.Join(dir, "runedge-"+name+".yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}
