package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/plugintest"
)

func TestLoadGoPlugin(t *testing.T) {
	e := newEngine(t)
	path := plugintest.Build(t, "./testdata/echo")
	p := loadGo(t, e, "echo", Options{})

	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	if got, want := p.SHA256(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SHA256() = %s, want %s", got, want)
	}
	if p.Name() != "echo" {
		t.Errorf("Name() = %q, want the file's base name %q", p.Name(), "echo")
	}
	if !p.Has(MapRequest) || !p.Has(MapResult) {
		t.Errorf("Has(MapRequest), Has(MapResult) = %v, %v; want true, true", p.Has(MapRequest), p.Has(MapResult))
	}
	// The instance Load checked is kept for the first call.
	wantStats(t, p, Stats{Instances: 1, Idle: 1})
}

func TestLoadOptionsName(t *testing.T) {
	e := newEngine(t)
	p := loadRaw(t, e, echoGuest(), Options{Name: "chat"})
	if p.Name() != "chat" {
		t.Errorf("Name() = %q, want %q", p.Name(), "chat")
	}
}

func TestLoadRejectsBrokenPlugins(t *testing.T) {
	withHooks := func(g rawGuest, hooks int32) rawGuest { g.hooks = hooks; return g }
	withVersion := func(g rawGuest, v int32) rawGuest { g.version = v; return g }
	omit := func(g rawGuest, name string) rawGuest { g.omit = name; return g }
	selfTest := withHooks(echoGuest(), int32(abi.HookMapRequest|abi.HookSelfTest))
	selfTest.selfTest = 3
	allocNoArg := echoGuest()
	allocNoArg.allocNoArg = true

	tests := []struct {
		name  string
		wasm  []byte
		wants []string // substrings of the error
	}{
		{"not wasm", []byte("#!/bin/sh\n"), []string{"compile"}},
		{"wrong ABI version", withVersion(echoGuest(), 2).wasm(), []string{"ABI version 2", "version 1"}},
		{"no abi version", omit(echoGuest(), abi.ExportABIVersion).wasm(), []string{"missing required export runedge_abi_version"}},
		{"no hooks export", omit(echoGuest(), abi.ExportHooks).wasm(), []string{"missing required export runedge_hooks"}},
		{"no alloc", omit(echoGuest(), abi.ExportAlloc).wasm(), []string{"missing required export runedge_alloc"}},
		{"no output", omit(echoGuest(), abi.ExportOutput).wasm(), []string{"missing required export runedge_output"}},
		{"no memory", omit(echoGuest(), abi.ExportMemory).wasm(), []string{`missing required export "memory"`}},
		{"alloc wrong type", allocNoArg.wasm(), []string{"runedge_alloc has type () -> i32, want (i32) -> i32"}},
		{"hook bit without export", omit(echoGuest(), abi.ExportMapResult).wasm(), []string{"reports runedge_map_result", "does not export"}},
		{"map_stream bit without export", omit(withHooks(echoGuest(), int32(abi.HookMapStream)), abi.ExportMapStream).wasm(), []string{"reports runedge_map_stream", "does not export"}},
		{"no mapping hook", withHooks(echoGuest(), int32(abi.HookSelfTest)).wasm(), []string{"no mapping hook"}},
		{"unknown hook bit", withHooks(echoGuest(), 1<<5|int32(abi.HookMapRequest)).wasm(), []string{"unknown bits 0x20"}},
		{"self test fails", selfTest.wasm(), []string{"self test failed (status 3)"}},
	}
	e := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := e.LoadBytes(context.Background(), "broken", tt.wasm, Options{})
			if err == nil {
				p.Close(context.Background())
				t.Fatal("LoadBytes succeeded, want an error")
			}
			for _, want := range append([]string{"load plugin broken: "}, tt.wants...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadGoPluginFailingSelfTest(t *testing.T) {
	e := newEngine(t)
	path := plugintest.Build(t, "./testdata/badselftest")
	p, err := e.Load(context.Background(), path, Options{})
	if err == nil {
		p.Close(context.Background())
		t.Fatal("Load succeeded, want the self test's error")
	}
	for _, want := range []string{path, "self test failed", "golden case mismatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{garbage, filepath.Join(dir, "missing.wasm")} {
		_, err := e.Load(context.Background(), path, Options{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Load(%s) error = %v, want one naming the file", path, err)
		}
	}
}

func TestLoadReusesCompiledModules(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	a := loadRaw(t, e, echoGuest(), Options{})
	b := loadRaw(t, e, echoGuest(), Options{})
	if n, refs := compiledState(e); n != 1 || refs != 2 {
		t.Fatalf("two plugins from the same bytes: %d compiled modules with %d references, want 1 with 2", n, refs)
	}
	first := onlyCompiled(t, e)
	a.Close(ctx)
	b.Close(ctx)
	if n, refs := compiledState(e); n != 1 || refs != 0 {
		t.Fatalf("after closing both: %d compiled modules with %d references, want 1 idle one kept", n, refs)
	}
	c := loadRaw(t, e, echoGuest(), Options{})
	if onlyCompiled(t, e) != first {
		t.Fatal("loading the same bytes again compiled them again")
	}
	c.Close(ctx)

	// Idle compiled modules beyond keepIdleCompiled are closed, oldest first.
	for status := range int32(keepIdleCompiled) {
		g := echoGuest()
		g.status = 10 + status // different bytes
		loadRaw(t, e, g, Options{}).Close(ctx)
	}
	if n, _ := compiledState(e); n != keepIdleCompiled {
		t.Fatalf("%d compiled modules kept, want %d", n, keepIdleCompiled)
	}
	e.mu.Lock()
	closed := first.closed
	e.mu.Unlock()
	if !closed {
		t.Error("the oldest idle compiled module was kept")
	}
}

// compiledState returns how many compiled modules e holds and how many
// references they have in all.
func compiledState(e *Engine) (n, refs int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, entry := range e.compiled {
		refs += entry.refs
	}
	return len(e.compiled), refs
}

// onlyCompiled returns e's one compiled module.
func onlyCompiled(t *testing.T, e *Engine) *compiledEntry {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.compiled) != 1 {
		t.Fatalf("engine holds %d compiled modules, want 1", len(e.compiled))
	}
	for _, entry := range e.compiled {
		return entry
	}
	return nil
}

func TestLoadOnClosedEngine(t *testing.T) {
	e := newEngine(t)
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.LoadBytes(context.Background(), "raw", echoGuest().wasm(), Options{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("LoadBytes on a closed engine: error = %v, want one saying it is closed", err)
	}
}

func TestLoadRejectsBadOptions(t *testing.T) {
	e := newEngine(t)
	_, err := e.LoadBytes(context.Background(), "raw", echoGuest().wasm(), Options{MaxMemoryPages: maxMemoryPages + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxMemoryPages") {
		t.Fatalf("error = %v, want one about MaxMemoryPages", err)
	}
}

func TestLoadConcurrentlyCompilesOnce(t *testing.T) {
	e := newEngine(t)
	wasm := echoGuest().wasm()
	plugins := make([]*Plugin, 4)
	errs := make([]error, len(plugins))
	var wg sync.WaitGroup
	for i := range plugins {
		wg.Go(func() { plugins[i], errs[i] = e.LoadBytes(context.Background(), "raw", wasm, Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		defer plugins[i].Close(context.Background())
	}
	if n, refs := compiledState(e); n != 1 || refs != len(plugins) {
		t.Fatalf("%d concurrent loads: %d compiled modules with %d references, want 1 with %d", len(plugins), n, refs, len(plugins))
	}
}

func TestLoadForgetsFailedCompilation(t *testing.T) {
	e := newEngine(t)
	if _, err := e.LoadBytes(context.Background(), "bad", []byte("\x00asm\x01\x00\x00\x00\x99"), Options{}); err == nil {
		t.Fatal("LoadBytes of a corrupt module succeeded")
	}
	if n, _ := compiledState(e); n != 0 {
		t.Fatalf("engine keeps %d compiled modules after a failed compilation, want 0", n)
	}
}

func TestLoadVersion(t *testing.T) {
	e := newEngine(t)
	if v := loadGo(t, e, "echo", Options{}).Version(); v != "1.2.0-test" {
		t.Errorf("echo: Version() = %q, want the one it registers, %q", v, "1.2.0-test")
	}
	if v := loadGo(t, e, "rawabi", Options{}).Version(); v != "" {
		t.Errorf("rawabi: Version() = %q, want \"\" without runedge_version", v)
	}
	if v := loadRaw(t, e, echoGuest(), Options{}).Version(); v != "" {
		t.Errorf("raw: Version() = %q, want \"\"", v)
	}
	broken := []struct {
		name    string
		version uint64
		want    string
	}{
		{"not printable", bufferAt<<32 | 3, `runedge_version returned "\x00\x00\x00", which is not printable UTF-8`},
		{"out of range", 70_000<<32 | 3, "runedge_version: range [70000, 70003) is outside"},
		{"too long", bufferAt<<32 | 65, "runedge_version returned 65 bytes, more than the 64 allowed"},
	}
	for _, tt := range broken {
		g := echoGuest()
		g.version64 = tt.version
		_, err := e.LoadBytes(context.Background(), "raw", g.wasm(), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: LoadBytes error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestLoadMapStreamOnly loads a plugin whose only mapping hook is
// map_stream, such as one that only redacts streamed text.
func TestLoadMapStreamOnly(t *testing.T) {
	g := echoGuest()
	g.hooks = int32(abi.HookMapStream)
	p := loadRaw(t, newEngine(t), g, Options{})
	if p.Has(MapRequest) || p.Has(MapResult) || !p.Has(MapStream) {
		t.Fatalf("Has(MapRequest, MapResult, MapStream) = %v, %v, %v; want false, false, true", p.Has(MapRequest), p.Has(MapResult), p.Has(MapStream))
	}
	if out, err := p.Call(context.Background(), MapStream, []byte("abc")); err != nil || string(out) != "abc" {
		t.Fatalf("Call(MapStream) = %q, %v", out, err)
	}
}
