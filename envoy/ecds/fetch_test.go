package ecds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchVerifies: bytes that do not hash to the reference are refused
// and leave nothing in the cache; good bytes are cached and a damaged
// cache entry is fetched again.
func TestFetchVerifies(t *testing.T) {
	body := "served bytes"
	var gets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets++
		w.Write([]byte(body))
	}))
	defer srv.Close()
	dir := t.TempDir()
	s := &Subscriber{CacheDir: dir, HTTP: srv.Client()}
	sum := sha256.Sum256([]byte("expected bytes"))
	want := hex.EncodeToString(sum[:])

	_, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want})
	if err == nil || !strings.Contains(err.Error(), "want "+want) {
		t.Fatalf("mismatched bytes: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the cache kept %d files after a refused download", len(entries))
	}

	body = "expected bytes"
	path, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want})
	if err != nil || filepath.Dir(path) != dir {
		t.Fatalf("fetch: %q %v", path, err)
	}
	if _, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want}); err != nil || gets != 2 {
		t.Fatalf("a cached plugin was fetched again: %d GETs, %v", gets, err)
	}
	os.WriteFile(path, []byte("damaged"), 0o644)
	if _, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want}); err != nil || gets != 3 {
		t.Fatalf("a damaged cache entry was used: %d GETs, %v", gets, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "expected bytes" {
		t.Fatalf("cache holds %q", b)
	}
}
