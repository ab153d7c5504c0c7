package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server"
	"github.com/runedge/runedge/plugins/plugintest"
)

// startAdmin starts a real server and returns its admin address.
func startAdmin(t *testing.T) (*server.Server, string) {
	t.Helper()
	chat := plugintest.Build(t, "github.com/runedge/runedge/plugins/chat")
	resp := plugintest.Build(t, "github.com/runedge/runedge/plugins/responses")
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	cfg.Store.Path = filepath.Join(cfg.Dir, "runs.db")
	cfg.Plugins.CacheDir = plugintest.CacheDir(t)
	cfg.Plugins.StoreDir = filepath.Join(cfg.Dir, "plugins")
	cfg.Chains[config.ChainChat] = config.Chain{MapRequest: chat, Translate: chat}
	cfg.Chains[config.ChainResponses] = config.Chain{MapRequest: resp, Translate: resp}
	cfg.Tokens = []config.Token{{Name: "ops", Hash: auth.HashToken("admin-tok"), Admin: true}}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	aln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go srv.ServeAdmin(aln)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, aln.Addr().String()
}

func TestPluginListAndSwap(t *testing.T) {
	_, addr := startAdmin(t)
	v2 := plugintest.Build(t, "../server/testdata/versioned/v2")
	env := func() (Env, *bytes.Buffer, *bytes.Buffer) {
		var o, e bytes.Buffer
		return Env{Stdout: &o, Stderr: &e, Getenv: func(k string) string {
			if k == "RUNEDGE_ADMIN_TOKEN" {
				return "admin-tok"
			}
			return ""
		}}, &o, &e
	}
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
