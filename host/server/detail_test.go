package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/plugins/plugintest"
)

// TestProviderDetailNotSent: a provider transport error (here, a refused
// connection to 127.0.0.1) reaches the client as a stable message with the
// run id, never the address or the error text.
func TestProviderDetailNotSent(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	h := start(t, func(c *config.Config) {
		c.Provider.Kind = config.ProviderOpenAI
		c.Provider.OpenAI.BaseURL = "http://" + addr + "/v1"
		c.Provider.OpenAI.Model = "m"
		c.Provider.OpenAI.MaxAttempts = 1
	})
	res := h.do("POST", "/v1/chat/completions", chatBody)
	b := wantError(t, res, 502, "api_error", "provider_error")
	msg := gjson.GetBytes(b, "error.message").Str
	id := checkRunHeaders(t, res.Header)
	if strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, strings.Split(addr, ":")[1]) || strings.Contains(msg, "dial tcp") || !strings.Contains(msg, id) {
		t.Fatalf("message %q: want no transport detail and the run id %s", msg, id)
	}
}

// TestPluginStderrNotSent: what a plugin wrote to stderr (a Go panic's
// message) stays in the log.
func TestPluginStderrNotSent(t *testing.T) {
	faulty := plugintest.Build(t, "./testdata/faulty")
	h := start(t, func(c *config.Config) {
		c.Chains[config.ChainChat] = config.Chain{MapRequest: faulty, Translate: faulty}
	})
	res := h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"panic now"}]}`)
	b := wantError(t, res, 500, "server_error", "plugin_error")
	msg := gjson.GetBytes(b, "error.message").Str
	if strings.Contains(msg, "stderr") || strings.Contains(msg, "panic") || strings.Contains(msg, "nil map") ||
		!strings.Contains(msg, "plugin faulty") || !strings.Contains(msg, checkRunHeaders(t, res.Header)) {
		t.Fatalf("message %q", msg)
	}
}

// TestPluginStoreModes: uploaded plugins are kept in a 0700 directory, as
// 0600 files.
func TestPluginStoreModes(t *testing.T) {
	h := start(t, nil)
	wasm, err := os.ReadFile(configtest.DefaultWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	if res, b := h.admin("PUT", "/admin/v1/plugins/chat.completions/translate", "application/wasm", wasm, tokAdmin); res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	dir := h.cfg.Path(h.cfg.Plugins.StoreDir)
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("store dir: %v %v", st.Mode(), err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stored plugin: %v %v", st.Mode(), err)
	}
}

// syncBuffer is a log sink for tests.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAdminNonLoopbackWarns: an admin listener reachable from the network
// is logged as a warning; a loopback one is not.
func TestAdminNonLoopbackWarns(t *testing.T) {
	cfg, _ := runConfig(t)
	for _, tc := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var logs syncBuffer
		srv, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		api, _ := net.Listen("tcp", "127.0.0.1:0")
		adm, err := net.Listen("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx, Listeners{API: api, Admin: adm}) }()
		time.Sleep(100 * time.Millisecond)
		cancel()
		<-done
		if got := strings.Contains(logs.String(), "admin.listen is not a loopback address"); got != tc.warn {
			t.Fatalf("%s: warned %v, want %v\n%s", tc.addr, got, tc.warn, logs.String())
		}
	}
}
