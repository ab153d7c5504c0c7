package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runedge/runedge/envoy/internal/gateway"
	"github.com/runedge/runedge/internal/golden"
)

// hashOnly publishes a plugin by hashing it, as the server's store would,
// without copying it anywhere.
func hashOnly(path string) (Plugin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Plugin{}, err
	}
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	return Plugin{SHA256: h, URL: "http://xds.test:18001/plugins/" + h}, nil
}

// render runs a gateway file through the whole pipeline: its resources as
// YAML, or the error a user would see.
func render(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pipeline(b, filepath.Dir(path))
	if err != nil {
		return []byte("error: |\n  " + strings.ReplaceAll(err.Error(), "\n", "\n  ") + "\n")
	}
	return out
}

func pipeline(b []byte, dir string) ([]byte, error) {
	f, err := gateway.Parse(b)
	if err != nil {
		return nil, err
	}
	f.Dir = dir
	g, err := Build(f, hashOnly)
	if err != nil {
		return nil, err
	}
	r, err := Translate(g)
	if err != nil {
		return nil, err
	}
	return r.YAML()
}

// TestGolden turns every gateway file in testdata/in into testdata/out of
// the same name. Run with -update to rewrite the expected files; review
// the diff like code.
func TestGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/in/*.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range ins {
		t.Run(filepath.Base(in), func(t *testing.T) {
			got := render(t, in)
			out := filepath.Join("testdata/out", filepath.Base(in))
			golden.Check(t, out, got)
		})
	}
}
