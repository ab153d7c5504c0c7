package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/runtime"
)

// adminRoutes is the operator API, on its own listener (admin.listen):
//
//	GET /admin/v1/plugins                      each stage's plugin
//	PUT /admin/v1/plugins/{endpoint}/{stage}   swap: body = the .wasm, or {"sha256":"…"} of a stored one
//	PUT /admin/v1/plugins/{stage}              the same for both endpoints
//	GET /metrics                               Prometheus
//	GET /debug/pprof/...                       Go's profiles (net/http/pprof)
//	/ui/                                       the operator page (ui.go, internal/ui)
//
// Everything but /healthz needs an admin token; /metrics is open only with
// admin.metrics_public (a scraper on a private network).
func (s *Server) adminRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/admin/v1/plugins", methods{http.MethodGet: s.adminChain(s.listPlugins)})
	mux.Handle("/admin/v1/plugins/{endpoint}/{stage}", methods{http.MethodPut: s.adminChain(s.swapPlugin)})
	mux.Handle("/admin/v1/plugins/{stage}", methods{http.MethodPut: s.adminChain(s.swapPlugin)})
	mux.Handle("/metrics", methods{http.MethodGet: s.metricsHandler()})
	mux.HandleFunc("/healthz", s.healthz)
	// The runtime's profiles, for an operator chasing CPU or memory on a
	// live host (make bench-edge -profile takes them): admin tokens only,
	// since a profile names code paths and a trace shows request timing.
	mux.Handle("/debug/pprof/", methods{http.MethodGet: s.adminHTTP(http.HandlerFunc(pprof.Index))})
	mux.Handle("/debug/pprof/profile", methods{http.MethodGet: s.adminHTTP(http.HandlerFunc(pprof.Profile))})
	mux.Handle("/debug/pprof/trace", methods{http.MethodGet: s.adminHTTP(http.HandlerFunc(pprof.Trace))})
	s.ui.Register(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("unknown path %s", r.URL.Path))
	})
	return mux
}

// metricsHandler serves the Prometheus registry, behind the admin token
// unless admin.metrics_public.
func (s *Server) metricsHandler() http.HandlerFunc {
	prom := promhttp.HandlerFor(s.metrics.Registry(), promhttp.HandlerOpts{})
	if s.cfg.Admin.MetricsPublic {
		return prom.ServeHTTP
	}
	return s.adminHTTP(prom)
}

// adminHTTP runs auth and requires an admin token before a plain HTTP
// handler (no body is read).
func (s *Server) adminHTTP(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		chain := filters.Chain(filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
			if !x.Identity.Admin {
				return errAdminRequired()
			}
			h.ServeHTTP(w, r)
			return nil
		}), g.auth)
		s.release(g)
		x := &filters.Exchange{Endpoint: filters.Native, Request: r, Reply: filters.NewReply(w, filters.Native)}
		if err := chain.Handle(r.Context(), x); err != nil {
			s.fail(x, err)
		}
	}
}

func errAdminRequired() error {
	return apierr.New(http.StatusForbidden, apierr.TypePermission, apierr.CodeAdminRequired,
		"the admin API needs a token marked admin in the configuration")
}

// adminChain runs auth, requires an admin token, reads the body (within
// limits.max_admin_body_bytes) and runs h: a caller without an admin token
// never gets a byte of its upload read.
func (s *Server) adminChain(h filters.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := s.acquire()
		chain := filters.Chain(h, g.auth, requireAdmin{}, bodystage.New(g.cfg.Limits.MaxAdminBodyBytes, g.cfg.Limits.ReadBodyTimeout.Std()))
		s.release(g) // the auth stage does not use plugins
		x := &filters.Exchange{Endpoint: filters.Native, Request: r, Reply: filters.NewReply(w, filters.Native)}
		x.Reply.SetWriteTimeout(g.cfg.Limits.WriteTimeout.Std())
		if err := chain.Handle(r.Context(), x); err != nil {
			s.fail(x, err)
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

// Plugins lists each stage's plugin, sorted by stage.
func (s *Server) Plugins() []PluginInfo {
	g := s.acquire()
	defer s.release(g)
	return pluginsOf(g)
}

// pluginsOf lists g's plugins; the caller holds g (acquire, or swapMu for
// the current generation).
func pluginsOf(g *generation) []PluginInfo {
	out := make([]PluginInfo, 0, len(g.stages))
	for stage, h := range g.stages {
		st := h.p.Stats()
		info := PluginInfo{Stage: stage, Plugin: h.p.Name(), Version: pluginVersion(h.p), SHA256: h.p.SHA256(),
			Since: h.since.Unix(), Instances: st.Instances, Idle: st.Idle, Hooks: []string{}}
		for _, hk := range []runtime.Hook{runtime.MapRequest, runtime.MapResult, runtime.MapStream} {
			if h.p.Has(hk) {
				info.Hooks = append(info.Hooks, hk.String())
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stage < out[j].Stage })
	return out
}

// pluginVersion is the plugin's declared version, or its digest's prefix.
func pluginVersion(p *runtime.Plugin) string {
	if v := p.Version(); v != "" {
		return v
	}
	return "sha256:" + p.SHA256()[:12]
}

func (s *Server) listPlugins(_ context.Context, x *filters.Exchange) error {
	return api.WriteJSON(x, map[string]any{"object": "list", "data": s.Plugins()})
}

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// swapPlugin stores the uploaded plugin under its digest (or finds a stored
// one by digest) and swaps it into the stage.
func (s *Server) swapPlugin(ctx context.Context, x *filters.Exchange) error {
	stage := x.Request.PathValue("stage")
	if ep := x.Request.PathValue("endpoint"); ep != "" {
		stage = ep + "/" + stage
	}
	if _, err := stageKeys(stage); err != nil {
		return apierr.NotFound("%v", err)
	}
	dir := s.cfg.Path(s.cfg.Plugins.StoreDir)
	var digest string
	if bytes.HasPrefix(x.Body, []byte("\x00asm")) {
		sum := sha256.Sum256(x.Body)
		digest = hex.EncodeToString(sum[:])
		if err := s.checkSignature(x, digest); err != nil {
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
			return s.swapTo(ctx, x, stage, native.Ref)
		}
		if err != nil || !hexDigest.MatchString(req.SHA256) {
			return apierr.InvalidBody("sha256", "send the plugin's .wasm bytes, {\"sha256\":\"<64 hex digits>\"} of a stored plugin, or {\"plugin\":\""+native.Ref+"\"} for the built-in default")
		}
		digest = req.SHA256
		if err := s.checkSignature(x, digest); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, digest+".wasm")
	if _, err := os.Stat(path); err != nil {
		return apierr.NotFound("no stored plugin with sha256 %s", digest)
	}
	return s.swapTo(ctx, x, stage, path)
}

// swapTo swaps the plugin at path (or native.Ref) into stage for the admin
// API, naming the caller as the swap's trigger.
func (s *Server) swapTo(ctx context.Context, x *filters.Exchange, stage, path string) error {
	trigger := "admin API, token " + x.Identity.Token
	if strings.HasPrefix(x.Request.UserAgent(), CLIUserAgent) {
		trigger = "CLI, token " + x.Identity.Token
	}
	if err := s.SwapPlugin(withSwapTrigger(ctx, trigger), stage, path); err != nil {
		e := apierr.New(http.StatusUnprocessableEntity, apierr.TypeInvalidRequest, apierr.CodePluginError, err.Error())
		e.Err = err
		return e
	}
	return s.listPlugins(ctx, x)
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
