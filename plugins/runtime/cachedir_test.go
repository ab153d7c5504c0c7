package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestConcurrentStartsShareOneKey: hosts starting at the same moment on
// a fresh cache directory all start, and all sign with the one key the
// directory keeps. Each host is a process of its own (this test binary,
// run again), and all open the cache at one instant.
func TestConcurrentStartsShareOneKey(t *testing.T) {
	if dir := os.Getenv("RUNEDGE_TEST_CACHE_START"); dir != "" {
		at, _ := strconv.ParseInt(os.Getenv("RUNEDGE_TEST_CACHE_AT"), 10, 64)
		time.Sleep(time.Until(time.Unix(0, at)))
		e, err := NewEngine(context.Background(), EngineConfig{CacheDir: dir})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Printf("key:%x\n", e.disk.key)
		os.Exit(0)
	}
	const hosts, rounds = 12, 4
	for round := 0; round < rounds; round++ {
		dir := filepath.Join(t.TempDir(), "cache")
		at := strconv.FormatInt(time.Now().Add(time.Second).UnixNano(), 10)
		outs := make([][]byte, hosts)
		errs := make([]error, hosts)
		var wg sync.WaitGroup
		for i := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentStartsShareOneKey$")
				cmd.Env = append(os.Environ(), "RUNEDGE_TEST_CACHE_START="+dir, "RUNEDGE_TEST_CACHE_AT="+at)
				outs[i], errs[i] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		key, err := os.ReadFile(filepath.Join(dir, cacheKeyFile))
		if err != nil || len(key) != 32 {
			t.Fatalf("round %d: the key file: %d bytes, %v", round, len(key), err)
		}
		want := fmt.Sprintf("key:%x", key)
		for i := range hosts {
			if errs[i] != nil || !bytes.Contains(outs[i], []byte(want)) {
				t.Fatalf("round %d: host %d: %v\n%s\nwant %s", round, i, errs[i], outs[i], want)
			}
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".key-*"))
		if len(left) > 0 {
			t.Fatalf("round %d: temporary key files left behind: %v", round, left)
		}
	}
}
