package runtime

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
)

// sharedCaches holds one wazero compilation cache per cache directory ("" for
// in-memory only) for the life of the process. Engines that share a cache
// share compiled code: a plugin loaded by several Engines at once (say, many
// test servers in one process) is compiled once. wazero counts references to
// each compiled module and frees its code when the last one is closed.
var sharedCaches = struct {
	sync.Mutex
	byDir map[string]wazero.CompilationCache
}{byDir: make(map[string]wazero.CompilationCache)}

// sharedCache returns the process-wide compilation cache for dir.
func sharedCache(dir string) (wazero.CompilationCache, error) {
	key := dir
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache dir %q: %w", dir, err)
		}
		key = abs
	}
	sharedCaches.Lock()
	defer sharedCaches.Unlock()
	if c, ok := sharedCaches.byDir[key]; ok {
		return c, nil
	}
	c := wazero.NewCompilationCache()
	if key != "" {
		var err error
		if c, err = wazero.NewCompilationCacheWithDir(key); err != nil {
			return nil, fmt.Errorf("compilation cache dir %q: %w", dir, err)
		}
	}
	sharedCaches.byDir[key] = c
	return c, nil
}
