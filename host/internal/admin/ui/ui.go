// Package ui is the operator page on the admin listener (/ui/): a login
// that trades the admin token for a server-side session cookie, a few JSON
// endpoints under /ui/api/ (runs, a run's detail and events, chart numbers
// read from the Prometheus registry, plugins and their swap history), a
// server-sent event stream of runs starting and ending, and the static page
// itself (HTML, CSS and one script, embedded; no build step).
//
// The package knows nothing of the server: it reads through Backend, which
// host/server implements, and it hears about runs as a runner.Observer.
package ui

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/host/internal/httpmux"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
)

// Backend is what the page reads from the server. Runs are read with
// admin scope: the page is for operators and sees every tenant.
type Backend interface {
	ListRuns(ctx context.Context, q runner.ListQuery) (runner.Page, error)
	// Run returns the run object with its input and output; an unknown id
	// is runner.ErrNotFound.
	Run(ctx context.Context, id string) (any, error)
	// RunEvents returns the run's first stored stream events: at least
	// max when it has that many, and not much more (the store is read in
	// pages with a SQL LIMIT, whatever the stream's length).
	RunEvents(ctx context.Context, id string, max int) ([]runner.StoredEvent, error)
	// Plugins and Swaps are the plugins each stage runs and the recent
	// swaps, as JSON-ready values.
	Plugins() any
	Swaps() any
	// AdminToken reports whether secret is a configured admin token, and
	// its name and configured hash (compared in constant time).
	AdminToken(secret string) (name string, hash [sha256.Size]byte, ok bool)
	// AdminTokenValid reports whether the token of that name is still
	// configured, marked admin, with that hash: a session ends when its
	// token goes or is rotated.
	AdminTokenValid(name string, hash [sha256.Size]byte) bool
	// Usage sums the usage ledger of every tenant (usage.go).
	Usage(ctx context.Context, q runner.UsageQuery) (runner.UsagePage, error)
	// Budgets are the configured budgets with what each has used in its
	// window (none without budgets).
	Budgets(ctx context.Context) ([]budget.Left, error)
}

// Config configures the page.
type Config struct {
	Backend  Backend
	Gatherer prometheus.Gatherer
	// SecureCookie marks the cookie Secure on plain HTTP too (a TLS
	// terminator in front); over TLS it always is.
	SecureCookie bool
	SessionTTL   time.Duration
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address the login throttle counts (admin.ui.trusted_proxies).
	TrustedProxies []netip.Prefix
	Log            *slog.Logger
}

// UI serves the page. It is also the runner.Observer that feeds the live
// run stream.
type UI struct {
	cfg      Config
	sessions *sessions
	throttle *throttle
	hub      *Hub
	stats    *sampler
	origin   *http.CrossOriginProtection
}

//go:embed static
var static embed.FS

// New returns the page; hub is the run stream it serves (see NewHub).
func New(cfg Config, hub *Hub) *UI {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &UI{cfg: cfg, sessions: newSessions(cfg.SessionTTL, maxSessions), throttle: newThrottle(),
		hub: hub, stats: newSampler(cfg.Gatherer), origin: http.NewCrossOriginProtection()}
}

// Register adds the page's routes to mux.
func (u *UI) Register(mux *http.ServeMux) {
	// Only the page's assets are public; the HTML is served by page and
	// loginPage, and nothing is listed.
	for _, name := range []string{"app.js", "app.css"} {
		mux.Handle("GET /ui/static/"+name, u.headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.ServeFileFS(w, r, static, "static/"+name)
		}), false))
	}
	mux.Handle("GET /ui/{$}", u.headers(http.HandlerFunc(u.page), true))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	mux.Handle("GET /ui/login", u.headers(http.HandlerFunc(u.loginPage), true))
	mux.Handle("POST /ui/login", u.headers(http.HandlerFunc(u.login), true))
	mux.Handle("POST /ui/logout", u.headers(http.HandlerFunc(u.logout), true))
	api := func(h http.HandlerFunc) http.Handler { return u.headers(u.requireSession(h), true) }
	mux.Handle("GET /ui/api/runs", api(u.listRuns))
	mux.Handle("GET /ui/api/runs/{id}", api(u.getRun))
	mux.Handle("GET /ui/api/runs/{id}/events", api(u.runEvents))
	mux.Handle("GET /ui/api/stream", api(u.stream))
	mux.Handle("GET /ui/api/stats", api(u.getStats))
	mux.Handle("GET /ui/api/plugins", api(u.getPlugins))
	mux.Handle("GET /ui/api/usage", api(u.getUsage))
	mux.Handle("GET /ui/api/budgets", api(u.getBudgets))
	mux.Handle("GET /ui/api/session", api(u.getSession))
	mux.Handle("/ui/api/", u.headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("unknown path %s", r.URL.Path))
	}), true))
}

// csp allows the page's own script, styles and requests, and nothing else:
// no inline script or style, no framing, forms only to itself.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// headers sets the security headers every answer carries; noStore also
// keeps pages and data out of caches.
func (u *UI) headers(h http.Handler, noStore bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		if noStore {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// writeError writes e in the OpenAI error shape.
var writeError = httpmux.WriteError

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, apierr.New(apierr.CodeInternal, "encoding the reply failed"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
