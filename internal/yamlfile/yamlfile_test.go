package yamlfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeRefusesUnknownKeysAndTakesEmpty(t *testing.T) {
	var v struct {
		Name string `yaml:"name"`
	}
	if err := Decode([]byte("name: a\n"), &v); err != nil || v.Name != "a" {
		t.Fatalf("known key: %v %+v", err, v)
	}
	if err := Decode([]byte("nmae: a\n"), &v); err == nil || !strings.Contains(err.Error(), "nmae") {
		t.Fatalf("unknown key: %v", err)
	}
	if err := Decode(nil, &v); err != nil || v.Name != "a" {
		t.Fatalf("empty document: %v %+v", err, v)
	}
}

func TestReadAndResolve(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(p, []byte("x: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, got, err := Read(p)
	if err != nil || string(b) != "x: 1\n" || got != dir {
		t.Fatalf("Read: %q %q %v", b, got, err)
	}
	if _, _, err := Read(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("Read of a missing file: no error")
	}
	for _, c := range []struct{ dir, p, want string }{
		{dir, "a/b", filepath.Join(dir, "a/b")},
		{dir, "/abs", "/abs"},
		{dir, "", ""},
		{"", "rel", "rel"},
	} {
		if got := Resolve(c.dir, c.p); got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.dir, c.p, got, c.want)
		}
	}
}
