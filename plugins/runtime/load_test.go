package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	selfTest := withHooks(echoGuest(), int32(bitMapRequest|bitSelfTest))
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
		{"no abi version", omit(echoGuest(), exportABIVersion).wasm(), []string{"missing required export runedge_abi_version"}},
		{"no hooks export", omit(echoGuest(), exportHooks).wasm(), []string{"missing required export runedge_hooks"}},
		{"no alloc", omit(echoGuest(), exportAlloc).wasm(), []string{"missing required export runedge_alloc"}},
		{"no output", omit(echoGuest(), exportOutput).wasm(), []string{"missing required export runedge_output"}},
		{"no memory", omit(echoGuest(), exportMemory).wasm(), []string{`missing required export "memory"`}},
		{"alloc wrong type", allocNoArg.wasm(), []string{"runedge_alloc has type () -> i32, want (i32) -> i32"}},
		{"hook bit without export", omit(echoGuest(), exportMapResult).wasm(), []string{"reports runedge_map_result", "does not export"}},
		{"no mapping hook", withHooks(echoGuest(), int32(bitSelfTest)).wasm(), []string{"no mapping hook"}},
		{"unknown hook bit", withHooks(echoGuest(), 1<<5|int32(bitMapRequest)).wasm(), []string{"unknown bits 0x20"}},
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

func TestLoadSharesCompiledModules(t *testing.T) {
	e := newEngine(t)
	a := loadRaw(t, e, echoGuest(), Options{})
	b := loadRaw(t, e, echoGuest(), Options{})
	if n := len(e.compiled); n != 1 {
		t.Fatalf("after loading the same bytes twice the engine holds %d compiled modules, want 1", n)
	}
	a.Close(context.Background())
	if n := len(e.compiled); n != 1 {
		t.Fatalf("after closing one of two plugins the engine holds %d compiled modules, want 1", n)
	}
	b.Close(context.Background())
	if n := len(e.compiled); n != 0 {
		t.Fatalf("after closing both plugins the engine holds %d compiled modules, want 0", n)
	}
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
