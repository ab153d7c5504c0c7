package server

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestPutAndServe(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "p.wasm")
	os.WriteFile(src, []byte("plugin bytes"), 0o644)
	h, err := s.Put(src)
	sum := sha256.Sum256([]byte("plugin bytes"))
	if err != nil || h != hex.EncodeToString(sum[:]) {
		t.Fatalf("Put: %q %v", h, err)
	}
	// A damaged entry is repaired by the next Put of the same content.
	os.WriteFile(filepath.Join(dir, "store", h), []byte("damaged"), 0o644)
	if _, err := s.Put(src); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	get := func(path string) (int, string, http.Header) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, hdr := get("/plugins/" + h); code != 200 || body != "plugin bytes" || hdr.Get("ETag") != `"`+h+`"` {
		t.Fatalf("GET the plugin: %d %q %v", code, body, hdr)
	}
	if PluginURL(srv.URL+"/", h) != srv.URL+"/plugins/"+h {
		t.Fatalf("URL: %s", PluginURL(srv.URL+"/", h))
	}
	for _, bad := range []string{"/plugins/" + h[:10], "/plugins/..%2Fp.wasm", "/plugins/" + hex.EncodeToString(make([]byte, 32))} {
		if code, _, _ := get(bad); code != 404 {
			t.Errorf("GET %s: %d, want 404", bad, code)
		}
	}
	if _, err := s.Put(filepath.Join(dir, "missing.wasm")); err == nil {
		t.Fatal("Put of a missing file succeeded")
	}
}
