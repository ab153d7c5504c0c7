package server

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/plugintest"
)

func (h *harness) admin(method, path, contentType string, reqBody []byte, token string) (*http.Response, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.Admin+path, strings.NewReader(string(reqBody)))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return res, body(h.t, res)
}

func TestAdminPluginSwap(t *testing.T) {
	h := start(t, nil)
	v2 := plugintest.Build(t, "./testdata/versioned/v2")
	wasm, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}

	if res, b := h.admin("GET", "/admin/v1/plugins", "", nil, tokApp); res.StatusCode != 403 {
		t.Fatalf("non-admin token: %d %s", res.StatusCode, b)
	}
	res, b := h.admin("GET", "/admin/v1/plugins", "", nil, tokAdmin)
	if res.StatusCode != 200 || len(gjson.GetBytes(b, "data").Array()) != 4 {
		t.Fatalf("list: %d %s", res.StatusCode, b)
	}

	// Upload v2 into the chat translate stage.
	res, b = h.admin("PUT", "/admin/v1/plugins/chat.completions/translate", "application/wasm", wasm, tokAdmin)
	if res.StatusCode != 200 {
		t.Fatalf("swap: %d %s", res.StatusCode, b)
	}
	entry := gjson.GetBytes(b, `data.#(stage=="chat.completions/translate")`)
	if entry.Get("version").Str != "v2" || entry.Get("plugin").Str == "" || len(entry.Get("sha256").Str) != 64 {
		t.Fatalf("entry after swap: %s", entry.Raw)
	}
	digest := entry.Get("sha256").Str
	reply := body(t, h.do("POST", "/v1/chat/completions", chatBody))
	if fp := gjson.GetBytes(reply, "system_fingerprint").Str; fp != "/v2" {
		t.Fatalf("reply after swap: fingerprint %q: %s", fp, reply)
	}

	// A stored plugin by digest, into both translate stages.
	res, b = h.admin("PUT", "/admin/v1/plugins/translate", "application/json", []byte(`{"sha256":"`+digest+`"}`), tokAdmin)
	if res.StatusCode != 200 || gjson.GetBytes(b, `data.#(stage=="responses/translate").sha256`).Str != digest {
		t.Fatalf("swap by digest: %d %s", res.StatusCode, b)
	}

	// A broken upload is refused; nothing changes.
	res, b = h.admin("PUT", "/admin/v1/plugins/responses/map-request", "application/wasm", []byte("\x00asm broken"), tokAdmin)
	if res.StatusCode != 422 || gjson.GetBytes(b, "error.code").Str != "plugin_error" {
		t.Fatalf("broken upload: %d %s", res.StatusCode, b)
	}
	if res, b := h.admin("PUT", "/admin/v1/plugins/sideways", "application/wasm", wasm, tokAdmin); res.StatusCode != 404 {
		t.Fatalf("unknown stage: %d %s", res.StatusCode, b)
	}

	res, b = h.admin("GET", "/metrics", "", nil, tokAdmin)
	if res.StatusCode != 200 || !strings.Contains(string(b), `runedge_plugin_swaps_total{result="ok",stage="chat.completions/translate"} 1`) ||
		!strings.Contains(string(b), `runedge_plugin_swaps_total{result="failed",stage="responses/map-request"} 1`) {
		t.Fatalf("metrics:\n%s", b)
	}
}

// TestAdminPprof: the runtime's profiles are on the admin listener, for
// admin tokens only (a profile names code paths, a trace shows timing).
func TestAdminPprof(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct {
		token string
		want  int
	}{{"", 401}, {tokApp, 403}, {tokAdmin, 200}} {
		res, b := h.admin("GET", "/debug/pprof/heap?debug=1", "", nil, tc.token)
		if res.StatusCode != tc.want {
			t.Fatalf("token %q: %d %s", tc.token, res.StatusCode, b)
		}
		if tc.want == 200 && !strings.Contains(string(b), "heap profile") {
			t.Fatalf("heap profile: %.200s", b)
		}
		if tc.want != 200 && gjson.GetBytes(b, "error.code").Str == "" {
			t.Fatalf("refusal not in the OpenAI error shape: %s", b)
		}
	}
	if res, b := h.admin("GET", "/debug/pprof/profile?seconds=1", "", nil, tokAdmin); res.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("cpu profile: %d, %d bytes", res.StatusCode, len(b))
	}
}
