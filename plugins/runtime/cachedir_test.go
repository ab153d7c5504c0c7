package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheDirWritableByOthersRefused: a cache directory that group or
// others may write is refused at start, with a message saying why.
func TestCacheDirWritableByOthersRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o775, 0o757} {
		dir := filepath.Join(t.TempDir(), "cache")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := NewEngine(context.Background(), EngineConfig{CacheDir: dir})
		if err == nil || !strings.Contains(err.Error(), "writable by group or others") {
			t.Errorf("mode %04o: NewEngine = %v, want a refusal", mode, err)
		}
	}
}

// entries lists the cache entries under dir's wazero directory, by path.
func entries(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := filepath.Join(dir, "wazero")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(root, path)
			out[rel] = b
		}
		return err
	})
	return out
}

func engineOn(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), EngineConfig{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// TestForeignCacheEntryNotLoaded: a valid wazero entry that this cache
// did not sign (here another module's compiled code, put where this
// plugin's entry goes, with a signature made under another key) is
// deleted before wazero compiles, never loaded: the plugin runs its own
// code and its entry is rewritten.
func TestForeignCacheEntryNotLoaded(t *testing.T) {
	echo := echoGuest()
	other := echoGuest()
	other.status = 7 // its map hooks fail: loading its code for echo shows
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")

	eA := engineOn(t, dirA)
	loadRaw(t, eA, echo, Options{})
	echoEntries := entries(t, dirA)
	if len(echoEntries) != 1 {
		t.Fatalf("%d entries after one compilation", len(echoEntries))
	}
	loadRaw(t, eA, other, Options{})
	var echoRel string
	var otherCode []byte
	for rel, b := range entries(t, dirA) {
		if _, ok := echoEntries[rel]; ok {
			echoRel = rel
		} else {
			otherCode = b
		}
	}
	sigA, err := os.ReadFile(filepath.Join(dirA, "sig", echoRel))
	if err != nil {
		t.Fatalf("the entry was not signed: %v", err)
	}

	eB := engineOn(t, dirB) // creates b's layout and key
	for _, f := range []struct {
		path string
		b    []byte
	}{{filepath.Join(dirB, "wazero", echoRel), otherCode}, {filepath.Join(dirB, "sig", echoRel), sigA}} {
		os.MkdirAll(filepath.Dir(f.path), 0o700)
		if err := os.WriteFile(f.path, f.b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := loadRaw(t, eB, echo, Options{})
	if out, err := p.Call(context.Background(), MapRequest, []byte("hello")); err != nil || string(out) != "hello" {
		t.Fatalf("Call = %q, %v: the foreign entry was loaded", out, err)
	}
	if got := entries(t, dirB)[echoRel]; bytes.Equal(got, otherCode) {
		t.Fatal("the foreign entry is still in the cache")
	}
}
