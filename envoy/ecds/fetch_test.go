package ecds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// counting is an HTTPS server that counts the requests it gets.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// subscriber is prepared as Run would prepare it: the control plane at
// planeAddr (its plugin server trusted, with srv's CA), origins allowed.
func subscriber(t *testing.T, srv *httptest.Server, planeAddr string, origins ...string) *Subscriber {
	t.Helper()
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig
	s := &Subscriber{Addr: planeAddr, NodeID: "n", CacheDir: t.TempDir(), TLS: tlsConfig, Origins: origins, HTTP: srv.Client()}
	if _, err := s.prepare(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFetchVerifies: bytes that do not hash to the reference are refused
// and leave nothing in the cache, and the refusal carries neither the
// bytes nor their digest; good bytes are cached and a damaged cache entry
// is fetched again.
func TestFetchVerifies(t *testing.T) {
	body := "served bytes"
	srv, gets := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) })
	s := subscriber(t, srv, srv.Listener.Addr().String()) // the control plane's own plugin server
	want := hexSHA("expected bytes")

	_, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want})
	if err == nil || !strings.Contains(err.Error(), "do not match the sha256") {
		t.Fatalf("mismatched bytes: %v", err)
	}
	if strings.Contains(err.Error(), body) || strings.Contains(err.Error(), hexSHA(body)) {
		t.Fatalf("the refusal carries the fetched bytes or their digest: %v", err)
	}
	if entries, _ := os.ReadDir(s.CacheDir); len(entries) != 0 {
		t.Fatalf("the cache kept %d files after a refused download", len(entries))
	}

	body = "expected bytes"
	path, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want})
	if err != nil || filepath.Dir(path) != s.CacheDir {
		t.Fatalf("fetch: %q %v", path, err)
	}
	if _, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want}); err != nil || gets.Load() != 2 {
		t.Fatalf("a cached plugin was fetched again: %d GETs, %v", gets.Load(), err)
	}
	os.WriteFile(path, []byte("damaged"), 0o644)
	if _, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + "/p", SHA256: want}); err != nil || gets.Load() != 3 {
		t.Fatalf("a damaged cache entry was used: %d GETs, %v", gets.Load(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "expected bytes" {
		t.Fatalf("cache holds %q", b)
	}
}

// TestFetchOnlyFromOrigins: a URL outside the configured origins and the
// control plane's host is refused before any request is made.
func TestFetchOnlyFromOrigins(t *testing.T) {
	good := "plugin"
	allowed, allowedHits := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(good)) })
	other, otherHits := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(good)) })
	s := subscriber(t, allowed, "xds.invalid:18000", allowed.URL+"/plugins")
	plainAllowed := strings.Replace(allowed.URL, "https://", "http://", 1)
	for _, u := range []string{
		other.URL + "/plugins/p", // another port of the same address
		strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/plugins/p",
		allowed.URL + "/admin/p",                  // outside the path prefix
		allowed.URL + "/plugins/../admin/p",       // dot segments out of it
		allowed.URL + "/plugins/%2e%2e/admin/p",   // escaped ones
		plainAllowed + "/plugins/p",               // not https
		"http://169.254.169.254/latest/meta-data", // a cloud metadata service
		"file:///etc/passwd",
	} {
		_, err := s.fetch(context.Background(), PluginRef{URL: u, SHA256: hexSHA(good)})
		if err == nil || !strings.Contains(err.Error(), "not under an allowed plugin origin") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if n := allowedHits.Load() + otherHits.Load(); n != 0 {
		t.Fatalf("refused URLs still made %d requests", n)
	}
	if _, err := s.fetch(context.Background(), PluginRef{URL: allowed.URL + "/plugins/p", SHA256: hexSHA(good)}); err != nil {
		t.Fatalf("a URL under the configured origin: %v", err)
	}
	if allowedHits.Load() != 1 {
		t.Fatalf("%d requests to the allowed origin, want 1", allowedHits.Load())
	}
}

// TestFetchNoRedirects: a redirect from an allowed origin is not followed,
// and the refusal does not echo where it pointed.
func TestFetchNoRedirects(t *testing.T) {
	target, targetHits := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("plugin")) })
	for name, planeAddr := range map[string]string{"configured origin": "xds.invalid:18000", "control plane": ""} {
		t.Run(name, func(t *testing.T) {
			redirector, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/secret-place", http.StatusFound)
			})
			if planeAddr == "" {
				planeAddr = redirector.Listener.Addr().String()
			}
			s := subscriber(t, redirector, planeAddr, redirector.URL+"/plugins/", target.URL)
			_, err := s.fetch(context.Background(), PluginRef{URL: redirector.URL + "/plugins/p", SHA256: hexSHA("plugin")})
			if err == nil || !strings.Contains(err.Error(), "redirects are not followed") || strings.Contains(err.Error(), "secret-place") {
				t.Fatalf("redirect: %v", err)
			}
			if targetHits.Load() != 0 {
				t.Fatal("the redirect was followed")
			}
		})
	}
}

// TestFetchSizeBound: a body over the bound is refused whether or not the
// server announces its length, and nothing is cached.
func TestFetchSizeBound(t *testing.T) {
	big := strings.Repeat("x", 100)
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.Write([]byte(big[:50]))
			w.(http.Flusher).Flush()
			w.Write([]byte(big[50:]))
			return
		}
		w.Write([]byte(big))
	})
	s := subscriber(t, srv, srv.Listener.Addr().String())
	s.MaxPluginBytes = 64
	for _, path := range []string{"/length", "/chunked"} {
		_, err := s.fetch(context.Background(), PluginRef{URL: srv.URL + path, SHA256: hexSHA(big)})
		if err == nil || !strings.Contains(err.Error(), "larger than 64 bytes") {
			t.Errorf("%s: %v", path, err)
		}
	}
	if entries, _ := os.ReadDir(s.CacheDir); len(entries) != 0 {
		t.Fatalf("the cache kept %d files", len(entries))
	}
}

func TestParseOrigin(t *testing.T) {
	for _, bad := range []string{"http://plugins.example", "https://", "https://u:p@plugins.example", "https://plugins.example/?q=1", "plugins.example"} {
		if _, err := ParseOrigin(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if _, err := ParseOrigin("https://plugins.example:8443/runedge"); err != nil {
		t.Fatal(err)
	}
}

// TestTLSOrInsecure: a subscriber without TLS does not start unless
// Insecure says so.
func TestTLSOrInsecure(t *testing.T) {
	s := &Subscriber{Addr: "127.0.0.1:1", NodeID: "n"}
	err := s.Run(context.Background(), func(context.Context, map[string]ChainRef) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "TLS is required") {
		t.Fatalf("Run without TLS: %v", err)
	}
}

// TestInsecureWarns: plaintext is allowed with Insecure, and logged as a
// warning.
func TestInsecureWarns(t *testing.T) {
	var logs strings.Builder
	s := &Subscriber{Addr: "127.0.0.1:1", NodeID: "n", Insecure: true, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := s.prepare(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "INSECURE") {
		t.Fatalf("no warning: %s", logs.String())
	}
}
