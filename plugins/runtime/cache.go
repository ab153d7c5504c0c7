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
	byDir map[string]sharedEntry
}{byDir: make(map[string]sharedEntry)}

type sharedEntry struct {
	cache wazero.CompilationCache
	disk  *diskCache // nil: in memory only
}

// sharedCache returns the process-wide compilation cache for dir, and its
// signed directory (cachedir.go; nil for the in-memory cache). A directory
// that group or others may write is refused.
func sharedCache(dir string) (wazero.CompilationCache, *diskCache, error) {
	key := dir
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("compilation cache dir %q: %w", dir, err)
		}
		key = abs
	}
	sharedCaches.Lock()
	defer sharedCaches.Unlock()
	if c, ok := sharedCaches.byDir[key]; ok {
		// Checked again: the directory may have changed since.
		if c.disk != nil {
			if err := ownerOnly(c.disk.dir); err != nil {
				return nil, nil, fmt.Errorf("compilation cache dir: %w", err)
			}
		}
		return c.cache, c.disk, nil
	}
	c := sharedEntry{cache: wazero.NewCompilationCache()}
	if key != "" {
		disk, err := openDiskCache(key)
		if err != nil {
			return nil, nil, fmt.Errorf("compilation cache dir: %w", err)
		}
		if c.cache, err = wazero.NewCompilationCacheWithDir(disk.entries); err != nil {
			return nil, nil, fmt.Errorf("compilation cache dir %q: %w", dir, err)
		}
		c.disk = disk
	}
	sharedCaches.byDir[key] = c
	return c.cache, c.disk, nil
}
