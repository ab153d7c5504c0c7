package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gopkg.in/yaml.v3"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// runConfig is a test configuration written to a file, so that a file
// watcher can be part of the server.
func runConfig(t *testing.T) (*config.Config, string) {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "ops", Hash: auth.HashToken(tokAdmin), Admin: true}}
	path := filepath.Join(cfg.Dir, "runedge.yaml")
	writeConfig(t, path, cfg)
	loaded, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return loaded, path
}

func writeConfig(t *testing.T, path string, cfg *config.Config) {
	t.Helper()
	doc := map[string]any{
		"tokens": []map[string]any{{"name": "ops", "hash": cfg.Tokens[0].Hash, "admin": true}},
		"store":  map[string]any{"path": cfg.Store.Path},
		"plugins": map[string]any{"cache_dir": cfg.Plugins.CacheDir, "store_dir": cfg.Plugins.StoreDir,
			"pool_size": cfg.Plugins.PoolSize},
		"admin": map[string]any{"listen": "127.0.0.1:0"},
		"limits": map[string]any{"rate_per_second": cfg.Limits.RatePerSecond,
			"shutdown_grace": "2s"},
		"chains": cfg.Chains,
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// getOnce sends one request on a connection of its own, so that no idle
// client connection is left behind for the leak check.
func getOnce(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestRunOwnsEveryGoroutine: the API server, the admin server and the
// config watcher all stop with Run, nothing is left running (goleak), and
// the server refuses a Reload once closed.
func TestRunOwnsEveryGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, path := runConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	api, _ := net.Listen("tcp", "127.0.0.1:0")
	adm, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, Listeners{API: api, Admin: adm}, WatchFile(path, 20*time.Millisecond, nil))
	}()
	if c := getOnce(t, "http://"+api.Addr().String()+"/v1/models", tokAdmin); c != 200 {
		t.Fatalf("models: %d", c)
	}
	if c := getOnce(t, "http://"+adm.Addr().String()+"/admin/v1/plugins", tokAdmin); c != 200 {
		t.Fatalf("admin: %d", c)
	}
	// The watcher works while the server runs: a rate limit appears.
	cfg.Limits.RatePerSecond = 0.001
	writeConfig(t, path, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for getOnce(t, "http://"+api.Addr().String()+"/v1/models", tokAdmin) != http.StatusTooManyRequests {
		if time.Now().After(deadline) {
			t.Fatal("the config watcher did not reload")
		}
		time.Sleep(20 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	for _, ln := range []net.Listener{api, adm} {
		if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still accepts after Run returned", ln.Addr())
		}
	}
	// Neither a watcher that outlived the server nor anyone else can
	// build a generation on the closed engine.
	if err := srv.Reload(context.Background(), cfg); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reload after close: %v, want ErrClosed", err)
	}
	if err := srv.SwapPlugin(context.Background(), "translate", configtest.DefaultWasm(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("SwapPlugin after close: %v, want ErrClosed", err)
	}
}

// TestRunListenerFailureStopsEverything: when the API listener fails, Run
// returns its error having stopped the admin server and the watchers and
// closed the store, with nothing left running.
func TestRunListenerFailureStopsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, path := runConfig(t)
	srv, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	api := &failingListener{fail: make(chan struct{}), addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}}
	adm, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), Listeners{API: api, Admin: adm}, WatchFile(path, 20*time.Millisecond, nil))
	}()
	if c := getOnce(t, "http://"+adm.Addr().String()+"/healthz", ""); c != 200 {
		t.Fatalf("admin: %d", c)
	}
	close(api.fail)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "accept failed") {
			t.Fatalf("Run: %v, want the listener's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its listener failed")
	}
	if c, err := net.DialTimeout("tcp", adm.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the admin server is still running after Run failed")
	}
	if err := srv.Reload(context.Background(), cfg); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reload after a failed Run: %v, want ErrClosed", err)
	}
}

// failingListener accepts nothing and fails once fail is closed.
type failingListener struct {
	fail chan struct{}
	addr net.Addr
}

func (l *failingListener) Accept() (net.Conn, error) {
	<-l.fail
	return nil, errors.New("accept failed")
}
func (l *failingListener) Close() error   { return nil }
func (l *failingListener) Addr() net.Addr { return l.addr }
