package runtime

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A compilation cache entry is machine code that wazero maps executable
// after only a CRC check: whoever can put a file in the cache directory
// runs code in runedge. So the directory must be writable by its owner
// alone, and every entry is signed: an HMAC-SHA256, under a key kept in
// the directory (mode 0600, made on first use), over the entry's path and
// bytes, in a sidecar file. Before each compilation, entries without a
// valid signature are deleted, so wazero never loads them; after it, the
// entries wazero wrote are signed.
//
// Layout of a cache directory:
//
//	key                       32 random bytes, 0600
//	wazero/                   wazero's cache (0700)
//	sig/<path under wazero>   the entry's HMAC
type diskCache struct {
	dir, entries, sigs string
	key                []byte

	mu sync.Mutex
	// verified remembers entries already checked (by size and time), so
	// a compilation reads only new or changed files.
	verified map[string]fileStamp
}

type fileStamp struct {
	size int64
	mod  time.Time
}

const cacheKeyFile = "key"

// openDiskCache checks dir's permissions, creates its layout and reads (or
// makes) its key.
func openDiskCache(dir string) (*diskCache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := ownerOnly(dir); err != nil {
		return nil, err
	}
	c := &diskCache{dir: dir, entries: filepath.Join(dir, "wazero"), sigs: filepath.Join(dir, "sig"),
		verified: map[string]fileStamp{}}
	for _, d := range []string{c.entries, c.sigs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if err := ownerOnly(d); err != nil {
			return nil, err
		}
	}
	key, err := readOrMakeKey(filepath.Join(dir, cacheKeyFile))
	if err != nil {
		return nil, err
	}
	c.key = key
	return c, nil
}

// ownerOnly refuses a directory that group or others may write: a file
// they put there would be loaded as compiled code.
func ownerOnly(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symbolic link is refused too)", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): a file put there would run as compiled plugin code; make it writable by its owner only (chmod go-w)", dir, perm)
	}
	return nil
}

// readOrMakeKey returns the 32-byte key in path, creating it (0600) when
// absent. A key readable or writable by others is refused.
// Any number of hosts may start at once on one directory: each writes a
// whole key to a temporary file and links it to path, which only the
// first link succeeds in; every host then reads the key that won, so no
// host ever reads a key half written.
func readOrMakeKey(path string) ([]byte, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := makeKey(path); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s must be a regular file readable by its owner only (mode 0600), not %s", path, fi.Mode())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s is %d bytes, not a 32-byte key; delete the cache directory to start afresh", path, len(key))
	}
	return key, nil
}

// makeKey puts a new random key at path unless another host's got there
// first (then it leaves that one): written whole to a temporary file
// (0600, synced), then linked to path, which fails if path exists.
func makeKey(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	_, werr := f.Write(key)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// mac is the signature of the entry at rel (its path under entries).
func (c *diskCache) mac(rel string, r io.Reader) ([]byte, error) {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(rel))
	m.Write([]byte{0})
	if _, err := io.Copy(m, r); err != nil {
		return nil, err
	}
	return m.Sum(nil), nil
}

// verify deletes every entry whose signature is missing or wrong, so that
// wazero, which is about to compile, cannot load it.
func (c *diskCache) verify() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.walk(func(rel, path string, fi fs.FileInfo) error {
		stamp := fileStamp{fi.Size(), fi.ModTime()}
		if c.verified[rel] == stamp {
			return nil
		}
		ok, err := c.signed(rel, path)
		if err != nil {
			return err
		}
		if !ok {
			delete(c.verified, rel)
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}
		c.verified[rel] = stamp
		return nil
	})
}

// signed reports whether the entry at path carries a valid signature.
func (c *diskCache) signed(rel, path string) (bool, error) {
	want, err := os.ReadFile(filepath.Join(c.sigs, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	got, err := c.mac(rel, f)
	if err != nil {
		return false, err
	}
	return hmac.Equal(got, want), nil
}

// sign signs the entries that have no signature yet: the ones wazero has
// just written (verify deleted every other unsigned file before).
func (c *diskCache) sign() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.walk(func(rel, path string, fi fs.FileInfo) error {
		sig := filepath.Join(c.sigs, rel)
		if _, err := os.Stat(sig); err == nil {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		sum, err := c.mac(rel, f)
		f.Close()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(sig), 0o700); err != nil {
			return err
		}
		if err := writeAtomic(sig, sum); err != nil {
			return err
		}
		c.verified[rel] = fileStamp{fi.Size(), fi.ModTime()}
		return nil
	})
}

// walk calls fn for each regular file under entries, skipping wazero's
// temporary files.
func (c *diskCache) walk(fn func(rel, path string, fi fs.FileInfo) error) error {
	return filepath.WalkDir(c.entries, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".tmp") {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		rel, err := filepath.Rel(c.entries, path)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return os.Remove(path) // a link or device is never an entry
		}
		return fn(filepath.ToSlash(rel), path, fi)
	})
}

// writeAtomic writes b to path through a temporary file and a rename, so
// another process sharing the directory never reads half a signature.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".sig-*")
	if err != nil {
		return err
	}
	_, werr := io.Copy(f, bytes.NewReader(b))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return werr
	}
	return os.Rename(f.Name(), path)
}

// CheckCacheDir refuses an existing cache directory that group or others
// may write, as NewEngine would, for `runedge config check`. A directory
// that does not exist yet passes: NewEngine creates it owner-only.
func CheckCacheDir(dir string) error {
	if dir == "" {
		return nil
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := ownerOnly(dir); err != nil {
		return fmt.Errorf("plugins.cache_dir: %w", err)
	}
	return nil
}
