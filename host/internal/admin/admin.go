package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin/ui"
	"github.com/runedge/runedge/host/internal/httpmux"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Host is what the admin API and the operator page need of the server:
// its plugins and their swaps, its runs, and the current generation's
// auth stage and configuration. host/server implements it; this package
// never imports the server.
type Host interface {
	// Current returns the current generation's auth stage and
	// configuration (tokens, limits).
	Current() (*auth.Auth, *config.Config)
	// Plugins lists each stage's plugin, sorted by stage.
	Plugins() []PluginInfo
	// SwapHistory returns the latest reloads and swaps, newest first.
	SwapHistory() []SwapRecord
	// CheckStage refuses a stage argument SwapPlugin would refuse, before
	// an upload is stored.
	CheckStage(stage string) error
	// SwapPlugin puts the plugin at path (or native.Ref) into stage; on
	// failure the old one keeps serving. WithTrigger on ctx names who
	// asked.
	SwapPlugin(ctx context.Context, stage, path string) error
	// Runs is the run service (the operator page reads runs with admin
	// scope).
	Runs() *runner.Service
}

// Config is what New needs beside the Host: the settings read at start.
type Config struct {
	Host Host
	// Fail renders a chain's error once, as the API's errors are (and
	// logs a server fault).
	Fail func(*filters.Exchange, error)
	// Start is the start configuration: admin.* and plugins.store_dir,
	// plugins.trusted_keys, which a reload does not change.
	Start    *config.Config
	Registry *prometheus.Registry
	// Runs is the live stream of runs starting and ending, a
	// runner.Observer of the run service.
	Runs *ui.Hub
	Log  *slog.Logger
}

// Admin is the admin listener's handler: the operator API and the
// operator page.
type Admin struct {
	c   Config
	cfg *config.Config
	ui  *ui.UI
}

// New builds the admin API and the operator page on c.
func New(c Config) *Admin {
	a := &Admin{c: c, cfg: c.Start}
	a.ui = ui.New(ui.Config{Backend: uiBackend{c.Host}, Gatherer: c.Registry, SecureCookie: c.Start.Admin.UI.SecureCookie,
		SessionTTL: c.Start.Admin.UI.SessionTTL.Std(), TrustedProxies: c.Start.Admin.UI.Proxies(), Log: c.Log}, c.Runs)
	return a
}

// Revalidate ends the operator sessions whose token a reload removed or
// rotated.
func (a *Admin) Revalidate() { a.ui.Revalidate() }

// Handler is the operator API, on its own listener (admin.listen):
//
//	GET /admin/v1/plugins                      each stage's plugin
//	PUT /admin/v1/plugins/{endpoint}/{stage}   swap: body = the .wasm, or {"sha256":"…"} of a stored one
//	PUT /admin/v1/plugins/{stage}              the same for both endpoints
//	GET /metrics                               Prometheus
//	GET /debug/pprof/...                       Go's profiles (net/http/pprof)
//	/ui/                                       the operator page (backend.go, ui/)
//
// Everything but /healthz needs an admin token; /metrics is open only with
// admin.metrics_public (a scraper on a private network).
func (a *Admin) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/admin/v1/plugins", httpmux.Methods{http.MethodGet: a.adminChain(a.listPlugins)})
	mux.Handle("/admin/v1/plugins/{endpoint}/{stage}", httpmux.Methods{http.MethodPut: a.adminChain(a.swapPlugin)})
	mux.Handle("/admin/v1/plugins/{stage}", httpmux.Methods{http.MethodPut: a.adminChain(a.swapPlugin)})
	mux.Handle("/metrics", httpmux.Methods{http.MethodGet: a.metricsHandler()})
	mux.HandleFunc("/healthz", httpmux.Health)
	// The runtime's profiles, for an operator chasing CPU or memory on a
	// live host (make bench-edge -profile takes them): admin tokens only,
	// since a profile names code paths and a trace shows request timing.
	mux.Handle("/debug/pprof/", httpmux.Methods{http.MethodGet: a.adminHTTP(http.HandlerFunc(pprof.Index))})
	mux.Handle("/debug/pprof/profile", httpmux.Methods{http.MethodGet: a.adminHTTP(http.HandlerFunc(pprof.Profile))})
	mux.Handle("/debug/pprof/trace", httpmux.Methods{http.MethodGet: a.adminHTTP(http.HandlerFunc(pprof.Trace))})
	a.ui.Register(mux)
	mux.HandleFunc("/", httpmux.NotFound)
	return mux
}

// metricsHandler serves the Prometheus registry, behind the admin token
// unless admin.metrics_public.
func (a *Admin) metricsHandler() http.HandlerFunc {
	prom := promhttp.HandlerFor(a.c.Registry, promhttp.HandlerOpts{})
	if a.cfg.Admin.MetricsPublic {
		return prom.ServeHTTP
	}
	return a.adminHTTP(prom)
}

// adminHTTP runs auth and requires an admin token before a plain HTTP
// handler (no body is read).
func (a *Admin) adminHTTP(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		au, _ := a.c.Host.Current()
		chain := filters.Chain(filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
			if !x.Identity.Admin {
				return errAdminRequired()
			}
			h.ServeHTTP(w, r)
			return nil
		}), au)
		x := &filters.Exchange{Endpoint: filters.Native, Request: r, Reply: filters.NewReply(w, filters.Native)}
		if err := chain.Handle(r.Context(), x); err != nil {
			a.c.Fail(x, err)
		}
	}
}

func errAdminRequired() error {
	return apierr.New(apierr.CodeAdminRequired, "the admin API needs a token marked admin in the configuration")
}

// adminChain runs auth, requires an admin token, reads the body (within
// limits.max_admin_body_bytes) and runs h: a caller without an admin token
// never gets a byte of its upload read.
func (a *Admin) adminChain(h filters.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		au, cfg := a.c.Host.Current() // the auth stage does not use plugins
		chain := filters.Chain(h, au, requireAdmin{}, bodystage.New(cfg.Limits.MaxAdminBodyBytes, cfg.Limits.ReadBodyTimeout.Std()))
		x := &filters.Exchange{Endpoint: filters.Native, Request: r, Reply: filters.NewReply(w, filters.Native)}
		x.Reply.SetWriteTimeout(cfg.Limits.WriteTimeout.Std())
		if err := chain.Handle(r.Context(), x); err != nil {
			a.c.Fail(x, err)
		}
	}
}

// requireAdmin refuses a token not marked admin.
type requireAdmin struct{}

func (requireAdmin) Name() string { return "admin" }

func (requireAdmin) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	if !x.Identity.Admin {
		return errAdminRequired()
	}
	return next.Handle(ctx, x)
}

// PluginInfo describes the plugin of one stage.
type PluginInfo struct {
	Stage     string   `json:"stage"`
	Plugin    string   `json:"plugin"`
	Version   string   `json:"version"`
	SHA256    string   `json:"sha256"`
	Since     int64    `json:"since"`
	Hooks     []string `json:"hooks"`
	Instances int      `json:"instances"`
	Idle      int      `json:"idle"`
}

// PluginVersion is the plugin's declared version, or its digest's prefix.
func PluginVersion(p *runtime.Plugin) string {
	if v := p.Version(); v != "" {
		return v
	}
	return "sha256:" + p.SHA256()[:12]
}

func (a *Admin) listPlugins(_ context.Context, x *filters.Exchange) error {
	return api.WriteJSON(x, map[string]any{"object": "list", "data": a.c.Host.Plugins()})
}

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// swapPlugin stores the uploaded plugin under its digest (or finds a stored
// one by digest) and swaps it into the stage.
func (a *Admin) swapPlugin(ctx context.Context, x *filters.Exchange) error {
	stage := x.Request.PathValue("stage")
	if ep := x.Request.PathValue("endpoint"); ep != "" {
		stage = ep + "/" + stage
	}
	if err := a.c.Host.CheckStage(stage); err != nil {
		return apierr.NotFound("%v", err)
	}
	dir := a.cfg.Path(a.cfg.Plugins.StoreDir)
	var digest string
	if bytes.HasPrefix(x.Body, []byte("\x00asm")) {
		sum := sha256.Sum256(x.Body)
		digest = hex.EncodeToString(sum[:])
		if err := a.checkSignature(x, digest); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, digest+".wasm"), x.Body); err != nil {
			return err
		}
	} else {
		var req struct {
			SHA256 string `json:"sha256"`
			Plugin string `json:"plugin"`
		}
		err := json.Unmarshal(x.Body, &req)
		if err == nil && req.Plugin == native.Ref && req.SHA256 == "" {
			// Back to the built-in default: the binary's own code, which
			// needs no upload and no signature.
			return a.swapTo(ctx, x, stage, native.Ref)
		}
		if err != nil || !hexDigest.MatchString(req.SHA256) {
			return apierr.InvalidBody("sha256", "send the plugin's .wasm bytes, {\"sha256\":\"<64 hex digits>\"} of a stored plugin, or {\"plugin\":\""+native.Ref+"\"} for the built-in default")
		}
		digest = req.SHA256
		if err := a.checkSignature(x, digest); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, digest+".wasm")
	if _, err := os.Stat(path); err != nil {
		return apierr.NotFound("no stored plugin with sha256 %s", digest)
	}
	return a.swapTo(ctx, x, stage, path)
}

// swapTo swaps the plugin at path (or native.Ref) into stage for the admin
// API, naming the caller as the swap's trigger.
func (a *Admin) swapTo(ctx context.Context, x *filters.Exchange, stage, path string) error {
	trigger := "admin API, token " + x.Identity.Token
	if strings.HasPrefix(x.Request.UserAgent(), CLIUserAgent) {
		trigger = "CLI, token " + x.Identity.Token
	}
	if err := a.c.Host.SwapPlugin(WithTrigger(ctx, trigger), stage, path); err != nil {
		e := apierr.SwapRefused(err.Error())
		e.Err = err
		return e
	}
	return a.listPlugins(ctx, x)
}

// writeFileAtomic writes b to path through a temporary file, so a reader
// never sees half a plugin.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("storing plugin: %w", err)
	}
	return nil
}
