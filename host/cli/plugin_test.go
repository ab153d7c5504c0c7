package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/host/server/servertest"
	"github.com/runedge/runedge/plugins/plugintest"
)

// startAdmin starts a real server whose admin token is admin-tok, trusting
// the plugin signing keys given, and returns its admin address.
func startAdmin(t *testing.T, trustedKeys ...string) (*servertest.Server, string) {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "ops", Hash: auth.HashToken("admin-tok"), Admin: true}}
	cfg.Plugins.TrustedKeys = trustedKeys
	s := servertest.Start(t, context.Background(), cfg)
	return s, s.Admin
}

// adminEnv is the environment of one CLI call made as that admin
// (RUNEDGE_ADMIN_TOKEN set), with its stdout and stderr.
func adminEnv() (Env, *bytes.Buffer, *bytes.Buffer) {
	var o, e bytes.Buffer
	return Env{Stdout: &o, Stderr: &e, Getenv: func(k string) string {
		if k == "RUNEDGE_ADMIN_TOKEN" {
			return "admin-tok"
		}
		return ""
	}}, &o, &e
}

func TestPluginListAndSwap(t *testing.T) {
	_, addr := startAdmin(t)
	v2 := plugintest.Build(t, "../server/testdata/versioned/v2")
	env := adminEnv
	ctx := context.Background()

	en, out, errOut := env()
	if code := Main(ctx, []string{"plugin", "list", "--admin", addr}, en); code != 0 {
		t.Fatalf("list: %s", errOut)
	}
	if !strings.Contains(out.String(), "chat.completions/translate") || !strings.Contains(out.String(), "responses/map-request") {
		t.Fatalf("list:\n%s", out)
	}

	en, out, errOut = env()
	if code := Main(ctx, []string{"plugin", "swap", "--admin", addr, "responses/translate", v2}, en); code != 0 {
		t.Fatalf("swap: %s", errOut)
	}
	var line string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "responses/translate") {
			line = l
		}
	}
	if !strings.Contains(line, " v2 ") {
		t.Fatalf("swapped stage does not show v2:\n%s", out)
	}

	// A failed swap says why and exits 1.
	en, _, errOut = env()
	if code := Main(ctx, []string{"plugin", "swap", "--admin", addr, "responses/translate", "plugin_test.go"}, en); code != 1 ||
		!strings.Contains(errOut.String(), "swap responses/translate") {
		t.Fatalf("bad swap: %d %s", code, errOut)
	}
	// A wrong token is refused.
	var o, e bytes.Buffer
	bad := Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "nope" }}
	if code := Main(ctx, []string{"plugin", "list", "--admin", addr}, bad); code != 1 || !strings.Contains(e.String(), "401") {
		t.Fatalf("wrong token: %d %s", code, e.String())
	}
}
