package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFingerprintStable: an unchanged gateway file and unchanged plugins
// give the same fingerprint on every tick and after every reload, so
// nothing is reloaded (or copied into the store) while nothing changes.
func TestFingerprintStable(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"gateway.yaml": "chains:\n" +
			"  chat.completions: {map_request: a.wasm, translate: b.wasm}\n" +
			"  responses: {map_request: c.wasm, translate: d.wasm}\n",
		"a.wasm": "a", "b.wasm": "b", "c.wasm": "c", "d.wasm": "d",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), Config{GatewayFile: filepath.Join(dir, "gateway.yaml"), Store: store, PluginsURL: "http://x", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	first := s.fingerprint()
	for range 50 {
		if err := s.reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s.fingerprint() != first {
			t.Fatal("the fingerprint of unchanged files changed")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "c.wasm"), []byte("c, rebuilt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.fingerprint() == first {
		t.Fatal("a rebuilt plugin did not change the fingerprint")
	}
}
