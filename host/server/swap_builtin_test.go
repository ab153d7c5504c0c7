package server

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/plugintest"
)

// Swap from the built-in default (native) to a WebAssembly plugin and back,
// 30 times, by both swap paths (xDS chains and the admin swap), while
// clients send streaming and non-streaming requests: no request fails, each
// reply comes from one of the two whole, and the retired wasm plugins'
// instances are closed.
func TestSwapBuiltinAndWasmUnderLoad(t *testing.T) {
	v2 := plugintest.Build(t, "./testdata/versioned/v2")
	chains := func(p string) map[string]config.Chain {
		return map[string]config.Chain{config.ChainChat: {MapRequest: p, Translate: p},
			config.ChainResponses: {MapRequest: p, Translate: p}}
	}
	h := start(t, func(c *config.Config) { c.Plugins.StreamWindow = config.Dur(0) })
	if p := h.srv.Plugins(); p[0].Version != native.Version {
		t.Fatalf("the default is not the native built-in: %+v", p[0])
	}
	ctx := context.Background()

	var stop atomic.Bool
	var requests, failures, builtin, wasm atomic.Int64
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		failures.Add(1)
		t.Errorf(format, args...)
	}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				requests.Add(1)
				switch (w + i) % 3 {
				case 0: // chat, whole: v2 stamps its replies ("request/result"
					// mapper: "/v2" while the admin swaps have moved one
					// stage only), the default does not
					res := h.do("POST", "/v1/chat/completions", chatBody)
					b := body(t, res)
					stamp := gjson.GetBytes(b, "system_fingerprint")
					switch {
					case res.StatusCode != 200 || gjson.GetBytes(b, "object").Str != "chat.completion":
						fail("chat: %d %s", res.StatusCode, b)
					case stamp.Str == "v2/v2" || stamp.Str == "/v2":
						wasm.Add(1)
					case !stamp.Exists() || stamp.Type == gjson.Null:
						builtin.Add(1)
					default:
						fail("chat from mixed mappings: %s", b)
					}
				case 1: // responses, streamed
					res := h.do("POST", "/v1/responses", `{"model":"service","stream":true,"input":"one two three"}`)
					evs := readEvents(t, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 || len(evs) == 0 || evs[len(evs)-1].Event != "response.completed" {
						fail("responses stream: %d %v", res.StatusCode, evs)
					}
				case 2: // chat, streamed
					res := h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"a b c"}]}`)
					evs := readEvents(t, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 || len(evs) == 0 || evs[len(evs)-1].Data != "[DONE]" {
						fail("chat stream: %d %v", res.StatusCode, evs)
					}
				}
			}
		})
	}

	var retired []*held
	for i := range 30 {
		before := h.srv.gen.Load()
		var err error
		switch i % 4 {
		case 0:
			err = h.srv.ApplyChains(ctx, chains(v2))
		case 1:
			err = h.srv.ApplyChains(ctx, chains(native.Ref))
		case 2:
			err = h.srv.SwapPlugin(ctx, "translate", v2)
			if err == nil {
				err = h.srv.SwapPlugin(ctx, "map-request", v2)
			}
		case 3:
			err = h.srv.SwapPlugin(ctx, "map-request", native.Ref)
			if err == nil {
				err = h.srv.SwapPlugin(ctx, "translate", native.Ref)
			}
		}
		if err != nil {
			t.Fatalf("swap %d: %v", i, err)
		}
		for _, hd := range before.stages {
			retired = append(retired, hd)
		}
	}
	stop.Store(true)
	wg.Wait()

	if failures.Load() > 0 {
		t.Fatalf("%d of %d requests failed or mixed mappings", failures.Load(), requests.Load())
	}
	if builtin.Load() == 0 || wasm.Load() == 0 {
		t.Fatalf("replies: %d from the built-in, %d from v2; want both", builtin.Load(), wasm.Load())
	}
	checkRetired(t, h, retired)
	t.Logf("%d requests during 30 swaps: %d chat replies from the built-in, %d from v2", requests.Load(), builtin.Load(), wasm.Load())
}

// The admin API swaps a stage to an uploaded plugin and back to the
// built-in default by name; the plugin list says which runs.
func TestAdminSwapBackToBuiltin(t *testing.T) {
	if config.BuiltinPlugin != native.Ref {
		t.Fatalf("config.BuiltinPlugin %q and native.Ref %q differ", config.BuiltinPlugin, native.Ref)
	}
	h := start(t, nil)
	wasm, err := os.ReadFile(plugintest.Build(t, "./testdata/versioned/v2"))
	if err != nil {
		t.Fatal(err)
	}
	version := func() string {
		_, b := h.admin("GET", "/admin/v1/plugins", "", nil, tokAdmin)
		return gjson.GetBytes(b, `data.#(stage=="chat.completions/translate").version`).Str
	}
	if v := version(); v != native.Version {
		t.Fatalf("before: %q", v)
	}
	if res, b := h.admin("PUT", "/admin/v1/plugins/chat.completions/translate", "application/wasm", wasm, tokAdmin); res.StatusCode != 200 || version() != "v2" {
		t.Fatalf("swap to v2: %d %s", res.StatusCode, b)
	}
	back := []byte(`{"plugin":"` + native.Ref + `"}`)
	if res, b := h.admin("PUT", "/admin/v1/plugins/chat.completions/translate", "application/json", back, tokAdmin); res.StatusCode != 200 || version() != native.Version {
		t.Fatalf("swap back: %d %s", res.StatusCode, b)
	}
	if res, b := h.admin("PUT", "/admin/v1/plugins/chat.completions/translate", "application/json", []byte(`{"plugin":"builtin:other"}`), tokAdmin); res.StatusCode != 400 {
		t.Fatalf("an unknown built-in: %d %s", res.StatusCode, b)
	}
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("chat after the swaps: %d %s", res.StatusCode, body(t, res))
	}
}

// A host on the default configuration loads no WebAssembly: no plugin
// instance exists until a swap names a wasm file, and none is left once it
// swaps back (RATIONALE: the default no longer compiles the 10 MB module).
func TestBuiltinLoadsNoWasm(t *testing.T) {
	h := start(t, nil)
	instances := func() bool {
		_, b := h.admin("GET", "/metrics", "", nil, tokAdmin)
		return strings.Contains(string(b), "\nrunedge_plugin_instances{")
	}
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("chat: %d %s", res.StatusCode, body(t, res))
	}
	if instances() {
		t.Fatal("the default configuration instantiated a wasm plugin")
	}
	wasm := configtest.DefaultWasm(t)
	if err := h.srv.SwapPlugin(t.Context(), "translate", wasm); err != nil {
		t.Fatal(err)
	}
	if !instances() {
		t.Fatal("a swap to the wasm build shows no instances: the check cannot see wasm")
	}
	if err := h.srv.SwapPlugin(t.Context(), "translate", native.Ref); err != nil {
		t.Fatal(err)
	}
	if instances() {
		t.Fatal("the wasm build's instances outlived the swap back")
	}
}
