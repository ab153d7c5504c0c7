// Package plugintest helps tests in any package build and load wasm plugins.
//
// Tests build plugins from source with Build rather than using a prebuilt
// .wasm, which would silently go stale; CacheDir lets every test binary on the
// machine share wazero's compilation cache, so each plugin version is
// compiled cold (over a second) only once.
package plugintest
