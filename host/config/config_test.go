package config

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/body"
)

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte(""))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.Limits.MaxBodyBytes != body.DefaultMaxBodyBytes ||
		c.Limits.ShutdownGrace.Std() != DefaultShutdownGrace || c.Store.Path != DefaultStorePath {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if c.Chains[ChainChat].MapRequest != "builtin:openai" {
		t.Fatalf("chat chain default: %+v", c.Chains[ChainChat])
	}
}

func TestParseValues(t *testing.T) {
	c, err := Parse([]byte(`
listen: 127.0.0.1:9999
tokens:
  - name: app
    hash: sha256:` + strings.Repeat("ab", 32) + `
    tenant: acme
limits:
  run_timeout: 2s
provider:
  offline:
    token_delay: 15ms
chains:
  responses:
    map_request: custom.wasm
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.RunTimeout.Std() != 2*time.Second || c.Provider.Offline.TokenDelay.Std() != 15*time.Millisecond {
		t.Fatalf("durations: %+v %+v", c.Limits, c.Provider)
	}
	if c.Tokens[0].Tenant != "acme" || c.Chains[ChainResponses].MapRequest != "custom.wasm" ||
		c.Chains[ChainResponses].Translate != "builtin:openai" {
		t.Fatalf("values: %+v", c)
	}
}

// Each bad document must be refused with a message naming the field.
func TestParseRefusesNamingTheField(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{"listen: nowhere", "listen"},
		{"tokens: [{name: a, hash: plain}]", "tokens[0].hash"},
		{"tokens: [{hash: sha256:" + strings.Repeat("0", 64) + "}]", "tokens[0].name"},
		{"tokens: [{name: a, hash: sha256:" + strings.Repeat("0", 64) + ", tenant: 'a b'}]", "tokens[0].tenant"},
		{"actors: {missing: maybe}", "actors.missing"},
		{"limits: {max_body_bytes: -1}", "limits.max_body_bytes"},
		{"limits: {run_timeout: soon}", "run_timeout"},
		{"store: {driver: mysql}", "store.driver"},
		{"provider: {kind: magic}", "provider.kind"},
		{"chains: {embeddings: {map_request: x.wasm}}", "chains.embeddings"},
		{"chains: {responses: {translate: builtin:chat}}", "chains.responses.translate"},
		{"plugins: {origins: [\"https://ok.example/p\", \"http://169.254.169.254\"]}", "plugins.origins[1]"},
		{"plugins: {trusted_keys: [\"ed25519:AAAA\"]}", "plugins.trusted_keys[0]"},
		{"listne: 127.0.0.1:1", "listne"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: want an error naming %s, got %v", tc.doc, tc.field, err)
		}
	}
}

func TestWatchReportsChanges(t *testing.T) {
	path := t.TempDir() + "/runedge.yaml"
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:9001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 4)
	go Watch(ctx, path, 10*time.Millisecond, func(c *Config, err error) {
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- c.Listen
	})
	// Watch takes the file's first digest when its goroutine runs, which a
	// loaded machine may delay past a write: each change is written again,
	// a comment apart, until Watch reports it.
	change := func(doc string) string {
		for i := 0; i < 100; i++ {
			if err := os.WriteFile(path, []byte(fmt.Sprintf("%s# %d\n", doc, i)), 0o644); err != nil {
				t.Fatal(err)
			}
			select {
			case v := <-got:
				return v
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatalf("no change reported for %q", doc)
		return ""
	}
	select {
	case v := <-got:
		t.Fatalf("unchanged file reported: %s", v)
	case <-time.After(30 * time.Millisecond):
	}
	if v := change("listen: 127.0.0.1:9002\n"); v != "127.0.0.1:9002" {
		t.Fatalf("first change: %s", v)
	}
	if v := change("listen: nowhere\n"); !strings.Contains(v, "listen") {
		t.Fatalf("bad change: %s", v)
	}
}

func TestWebSocketConfig(t *testing.T) {
	c := Default()
	if c.WebSocket.Age() != DefaultWebSocketMaxAge || c.WebSocket.Ping() != DefaultWebSocketPing || c.WebSocket.Cached() != DefaultWebSocketCached {
		t.Fatalf("defaults: %v %v %v", c.WebSocket.Age(), c.WebSocket.Ping(), c.WebSocket.Cached())
	}
	short, bad := Dur(time.Millisecond), Duration{}
	if err := bad.UnmarshalText([]byte("soon")); err != nil {
		t.Fatal(err)
	}
	c.WebSocket = WebSocket{MaxAge: &bad, PingInterval: &short, MaxCachedResponses: -1}
	err := c.Validate()
	for _, f := range []string{"websocket.max_age", "websocket.ping_interval", "websocket.max_cached_responses"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Fatalf("want an error naming %s, got %v", f, err)
		}
	}
}
