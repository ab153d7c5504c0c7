package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
)

// The chains a gateway file pushes are applied to a host's configuration
// under the same keys.
func TestChainKeysMatchHostConfig(t *testing.T) {
	if ChainChat != config.ChainChat || ChainResponses != config.ChainResponses {
		t.Fatalf("gateway chain keys %q %q, host config %q %q", ChainChat, ChainResponses, config.ChainChat, config.ChainResponses)
	}
}

func TestLoadResolvesPaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(path, []byte("chains:\n  responses: {map_request: p/a.wasm, translate: /abs/b.wasm}\n"), 0o644)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ch := f.Chains[ChainResponses]
	if f.Path(ch.MapRequest) != filepath.Join(dir, "p/a.wasm") || f.Path(ch.Translate) != "/abs/b.wasm" {
		t.Fatalf("paths: %s %s", f.Path(ch.MapRequest), f.Path(ch.Translate))
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"", 7 * time.Second, ""},
		{"250ms", 250 * time.Millisecond, ""},
		{"0s", 0, "must be positive"},
		{"-1s", 0, "must be positive"},
		{"soon", 0, "is not a duration"},
	} {
		got, err := Duration(c.in, 7*time.Second)
		if (c.err == "" && (err != nil || got != c.want)) || (c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err))) {
			t.Errorf("Duration(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// The deployment in examples/envoy must stay a valid gateway file.
func TestExampleValidates(t *testing.T) {
	f, err := Load("../../../examples/envoy/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Listeners) == 0 || len(f.Chains) != 2 {
		t.Fatalf("example: %d listeners, %d chains", len(f.Listeners), len(f.Chains))
	}
}
