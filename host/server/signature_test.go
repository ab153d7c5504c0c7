package server

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/signature"
)

// TestAdminSwapNeedsTrustedSignature: with plugins.trusted_keys, an admin
// swap of a plugin without a signature, or signed with another key, is a
// 403 before the plugin is stored or loaded, and the running plugin keeps
// serving; signed with a trusted key, the swap goes through.
func TestAdminSwapNeedsTrustedSignature(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	var storeDir string
	h := start(t, func(c *config.Config) {
		c.Plugins.TrustedKeys = []string{signature.FormatKey(pub)}
		storeDir = c.Path(c.Plugins.StoreDir)
	})
	wasm, err := os.ReadFile(plugintest.Build(t, "./testdata/versioned/v2"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	untrusted, _ := signature.Sign(otherPriv, digest)
	trusted, _ := signature.Sign(priv, digest)

	swap := func(reqBody []byte, contentType, sig string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("PUT", h.Admin+"/admin/v1/plugins/chat.completions/translate", bytes.NewReader(reqBody))
		req.Header.Set("Authorization", "Bearer "+tokAdmin)
		req.Header.Set("Content-Type", contentType)
		if sig != "" {
			req.Header.Set(admin.SignatureHeader, sig)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res, body(t, res)
	}
	for name, sig := range map[string]string{"unsigned": "", "another key": untrusted, "garbage": "bm90IGEgc2lnbmF0dXJl"} {
		res, b := swap(wasm, "application/wasm", sig)
		if res.StatusCode != 403 || gjson.GetBytes(b, "error.code").Str != "plugin_not_trusted" || gjson.GetBytes(b, "error.type").Str != "permission_error" {
			t.Fatalf("%s: %d %s", name, res.StatusCode, b)
		}
	}
	if _, err := os.Stat(filepath.Join(storeDir, digest+".wasm")); err == nil {
		t.Fatal("an untrusted upload was stored")
	}
	if fp := gjson.GetBytes(body(t, h.do("POST", "/v1/chat/completions", chatBody)), "system_fingerprint").Str; fp == "/v2" {
		t.Fatal("the untrusted plugin serves")
	}

	if res, b := swap(wasm, "application/wasm", trusted); res.StatusCode != 200 {
		t.Fatalf("signed: %d %s", res.StatusCode, b)
	}
	if fp := gjson.GetBytes(body(t, h.do("POST", "/v1/chat/completions", chatBody)), "system_fingerprint").Str; fp != "/v2" {
		t.Fatalf("after the signed swap: fingerprint %q", fp)
	}
	// A stored plugin named by its digest needs the signature too.
	if res, b := swap([]byte(`{"sha256":"`+digest+`"}`), "application/json", ""); res.StatusCode != 403 {
		t.Fatalf("stored plugin without a signature: %d %s", res.StatusCode, b)
	}
	if res, b := swap([]byte(`{"sha256":"`+digest+`"}`), "application/json", trusted); res.StatusCode != 200 {
		t.Fatalf("stored plugin with its signature: %d %s", res.StatusCode, b)
	}
}
