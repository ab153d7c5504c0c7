package admin

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin/ui"
	"github.com/runedge/runedge/runner"
)

// fakeHost is a Host with one plugin; it records the swaps asked of it.
type fakeHost struct {
	auth    *auth.Auth
	cfg     *config.Config
	swapped []string
}

func (h *fakeHost) Current() (*auth.Auth, *config.Config) { return h.auth, h.cfg }
func (h *fakeHost) Plugins() []PluginInfo {
	return []PluginInfo{{Stage: "chat.completions/translate", Plugin: "openai", Hooks: []string{}}}
}
func (h *fakeHost) SwapHistory() []SwapRecord { return nil }
func (h *fakeHost) Runs() *runner.Service     { return nil }
func (h *fakeHost) CheckStage(stage string) error {
	if stage != "translate" {
		return errors.New("unknown stage " + stage)
	}
	return nil
}
func (h *fakeHost) SwapPlugin(_ context.Context, stage, path string) error {
	h.swapped = append(h.swapped, stage+" "+path)
	return nil
}

// adminServer serves the admin API over a fakeHost on real HTTP, with an
// admin token "root" and a plain token "user".
func adminServer(t *testing.T) (*httptest.Server, *fakeHost) {
	t.Helper()
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	hash := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	a, err := auth.New(auth.Config{Tokens: []auth.Token{
		{Name: "root", Hash: hash("root-secret"), Tenant: "ops", Admin: true},
		{Name: "user", Hash: hash("user-secret"), Tenant: "acme"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{auth: a, cfg: cfg}
	fail := func(x *filters.Exchange, err error) { x.Reply.Error(apierr.From(err)) }
	adm := New(Config{Host: h, Fail: fail, Start: cfg, Registry: prometheus.NewRegistry(), Runs: ui.NewHub()})
	srv := httptest.NewServer(adm.Handler())
	t.Cleanup(srv.Close)
	return srv, h
}

func do(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The admin API answers only admin tokens, lists the host's plugins, and
// refuses a stage the host does not know before storing anything.
func TestAdminAPIThroughHost(t *testing.T) {
	srv, h := adminServer(t)
	if st, b := do(t, "GET", srv.URL+"/admin/v1/plugins", "user-secret", ""); st != 403 || gjson.Get(b, "error.code").Str != "admin_required" {
		t.Fatalf("plain token: %d %s", st, b)
	}
	st, b := do(t, "GET", srv.URL+"/admin/v1/plugins", "root-secret", "")
	if st != 200 || gjson.Get(b, "data.0.plugin").Str != "openai" {
		t.Fatalf("list: %d %s", st, b)
	}
	if st, b := do(t, "PUT", srv.URL+"/admin/v1/plugins/bogus", "root-secret", "\x00asm"); st != 404 {
		t.Fatalf("unknown stage: %d %s", st, b)
	}
	if st, b := do(t, "PUT", srv.URL+"/admin/v1/plugins/translate", "root-secret", `{"sha256":"nope"}`); st != 400 {
		t.Fatalf("bad digest: %d %s", st, b)
	}
	if st, b := do(t, "POST", srv.URL+"/admin/v1/plugins", "root-secret", ""); st != 405 {
		t.Fatalf("wrong method: %d %s", st, b)
	}
	if len(h.swapped) != 0 {
		t.Fatalf("swaps asked of the host: %v", h.swapped)
	}
}
