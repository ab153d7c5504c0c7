package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
)

// TestPluginKeygenSignSwap: `plugin keygen` makes a key and prints the
// line that trusts it, `plugin sign` writes FILE.sig, and `plugin swap`
// sends it: a server trusting the key takes the signed plugin and refuses
// it unsigned.
func TestPluginKeygenSignSwap(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	env := adminEnv
	key := filepath.Join(dir, "release.key")
	en, out, errOut := env()
	if code := Main(ctx, []string{"plugin", "keygen", "-o", key}, en); code != 0 {
		t.Fatalf("keygen: %s", errOut)
	}
	pub := regexp.MustCompile(`"(ed25519:[A-Za-z0-9+/=]+)"`).FindStringSubmatch(out.String())
	if pub == nil {
		t.Fatalf("keygen printed no key:\n%s", out)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}

	_, addr := startAdmin(t, pub[1])

	wasm := filepath.Join(dir, "v2.wasm")
	b, err := os.ReadFile(plugintest.Build(t, "../server/testdata/versioned/v2"))
	if err == nil {
		err = os.WriteFile(wasm, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	en, _, errOut = env()
	if code := Main(ctx, []string{"plugin", "swap", "--admin", addr, "responses/translate", wasm}, en); code != 1 ||
		!strings.Contains(errOut.String(), "not signed by a key in plugins.trusted_keys") {
		t.Fatalf("unsigned swap: %d %s", code, errOut)
	}
	en, _, errOut = env()
	if code := Main(ctx, []string{"plugin", "sign", "--key", key, wasm}, en); code != 0 {
		t.Fatalf("sign: %s", errOut)
	}
	en, out, errOut = env()
	if code := Main(ctx, []string{"plugin", "swap", "--admin", addr, "responses/translate", wasm}, en); code != 0 || !strings.Contains(out.String(), " v2 ") {
		t.Fatalf("signed swap: %d %s %s", code, out, errOut)
	}
}
