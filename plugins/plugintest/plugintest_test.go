package plugintest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestBuildOncePerProcess(t *testing.T) {
	path := Build(t, "../runtime/testdata/echo")
	if filepath.Base(path) != "echo.wasm" {
		t.Errorf("Build returned %s, want a file named echo.wasm", path)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Fatalf("%s is not a wasm module", path)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if again := Build(t, "../runtime/testdata/echo"); again != path {
		t.Fatalf("second Build returned %s, want %s", again, path)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("second Build rebuilt the plugin")
	}
}

// fatalTB records a Fatalf and stops the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestBuildFailureFailsTheTest(t *testing.T) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Build(tb, "./testdata/does-not-exist")
	}()
	<-done
	if !strings.Contains(tb.msg, "does-not-exist") {
		t.Fatalf("Build of a missing package reported %q, want a failure naming it", tb.msg)
	}
}

func TestCacheDir(t *testing.T) {
	dir := CacheDir(t)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("CacheDir() = %s: %v, want an existing directory", dir, err)
	}
	if dir != CacheDir(t) {
		t.Error("CacheDir is not stable")
	}
}
