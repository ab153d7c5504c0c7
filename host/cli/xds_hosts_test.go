package cli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	xdsserver "github.com/runedge/runedge/envoy/server"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/host/server"
	"github.com/runedge/runedge/host/server/servertest"
	"github.com/runedge/runedge/plugins/plugintest"
)

// Two runedge hosts subscribed to one control plane: a plugin change there
// reaches both, their replies change accordingly, and no request fails
// while it happens.
func TestECDSChangeReachesTwoHosts(t *testing.T) {
	v1 := plugintest.Build(t, "../server/testdata/versioned/v1")
	v2 := plugintest.Build(t, "../server/testdata/versioned/v2")
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugins", "translate.wasm")
	copyFile(t, v1, plugin)
	copyFile(t, plugintest.Build(t, "github.com/runedge/runedge/plugins/chat"), filepath.Join(dir, "plugins", "chat.wasm"))
	gw := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(gw, []byte("chains:\n  chat.completions:\n    map_request: plugins/chat.wasm\n    translate: plugins/translate.wasm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := xdsserver.OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	adsLn, _ := net.Listen("tcp", "127.0.0.1:0")
	httpLn, _ := net.Listen("tcp", "127.0.0.1:0")
	plane, err := xdsserver.New(ctx, xdsserver.Config{GatewayFile: gw, Store: store, PluginsURL: "http://" + httpLn.Addr().String(),
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	planeDone := make(chan error, 1)
	go func() { planeDone <- plane.Serve(ctx, adsLn, httpLn) }()
	defer func() { cancel(); <-planeDone }()

	var hosts []string
	for _, node := range []string{"host-a", "host-b"} {
		srv, cfg, url := startHost(t, ctx)
		if err := subscribe(ctx, srv, cfg, adsLn.Addr().String(), node, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, url)
	}
	waitFingerprint(t, hosts, "/v1")

	var stop atomic.Bool
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for _, u := range hosts {
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			for !stop.Load() {
				sent.Add(1)
				if fp, err := chatFingerprint(u); err != nil || (fp != "/v1" && fp != "/v2") {
					failed.Add(1)
					t.Errorf("request during the change: %q %v", fp, err)
				}
			}
		}(u)
	}
	copyFile(t, v2, plugin) // the control plane watches the plugin files too
	waitFingerprint(t, hosts, "/v2")
	stop.Store(true)
	wg.Wait()
	if failed.Load() != 0 || sent.Load() == 0 {
		t.Fatalf("%d of %d requests failed during the change", failed.Load(), sent.Load())
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// startHost starts a runedge host with the default plugins and a token
// "tok".
func startHost(t *testing.T, ctx context.Context) (*server.Server, *config.Config, string) {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken("tok")}}
	s := servertest.Start(t, ctx, cfg)
	return s.Server, cfg, s.URL
}

func chatFingerprint(base string) (string, error) {
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"service","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != 200 {
		return "", &statusError{res.StatusCode, string(b)}
	}
	return gjson.GetBytes(b, "system_fingerprint").Str, nil
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return http.StatusText(e.code) + ": " + e.body }

// waitFingerprint waits until every host's replies carry want. The bound is
// generous: on a cold machine each host compiles the fetched plugin from
// scratch (seconds under -race) before it can swap it in.
func waitFingerprint(t *testing.T, hosts []string, want string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for _, u := range hosts {
		for {
			fp, err := chatFingerprint(u)
			if err == nil && fp == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("host %s never answered with %s (last %q, %v)", u, want, fp, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
