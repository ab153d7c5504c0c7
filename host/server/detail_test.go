package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/internal/logbuf"
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

// TestAdminNonLoopbackWarns: an admin listener reachable from the network
// is logged as a warning; a loopback one is not.
func TestAdminNonLoopbackWarns(t *testing.T) {
	cfg, _ := runConfig(t)
	for _, tc := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var logs logbuf.Buffer
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

// TestUpstreamErrorTextNotSent: what an upstream says when it fails (its
// own message, quoting an internal address and a file path) reaches
// neither the client nor the run record; the client gets a stable message
// with the status class (502 provider_error for an error answer, whole or
// mid-stream), and the log has the upstream's words under the run id.
func TestUpstreamErrorTextNotSent(t *testing.T) {
	const secret = "dial 10.20.30.40:5432 failed: open /srv/models/llama/weights.bin"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(b, "stream").Bool() {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"error":{"message":"`+secret+`","type":"server_error"}}`+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"`+secret+`","type":"invalid_request_error"}}`)
	}))
	defer up.Close()
	var logs logbuf.Buffer
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}, {Name: "ops", Hash: auth.HashToken(tokAdmin), Admin: true}}
	viaOpenAI(up.URL+"/v1", func(o *config.OpenAI) { o.MaxAttempts = 1 })(cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := serveConfigLog(t, cfg, &logs)
	leaks := func(s string) bool {
		return strings.Contains(s, "10.20.30.40") || strings.Contains(s, "/srv/models") || strings.Contains(s, "weights.bin")
	}

	res := h.do("POST", "/v1/chat/completions", chatBody)
	b := wantError(t, res, http.StatusBadGateway, "api_error", "provider_error")
	id := checkRunHeaders(t, res.Header)
	if leaks(string(b)) || !strings.Contains(gjson.GetBytes(b, "error.message").Str, "400") {
		t.Fatalf("client body %s: want the status class, not the upstream's text", b)
	}
	if r := h.run(id); r.Error == nil || leaks(r.Error.Message) {
		t.Fatalf("run record error %+v", r.Error)
	}

	res = h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	sid := checkRunHeaders(t, res.Header)
	sb := body(t, res)
	if leaks(string(sb)) || !strings.Contains(string(sb), "provider_error") {
		t.Fatalf("stream %s", sb)
	}
	for _, rid := range []string{id, sid} {
		found := false
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "run_id="+rid) && strings.Contains(line, "10.20.30.40:5432") && strings.Contains(line, "/srv/models/llama/weights.bin") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no log line with run %s and the upstream's text:\n%s", rid, logs.String())
		}
	}
}
