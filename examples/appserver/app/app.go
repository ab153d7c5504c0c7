// Package app assembles the example app server: the page, log in and log
// out, and the two proxy routes. main only reads flags and listens, so
// tests drive exactly the handler that runs.
package app

import (
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/runedge/runedge/examples/appserver/login"
	"github.com/runedge/runedge/examples/appserver/proxy"
)

//go:embed static
var static embed.FS

// Config is what the app server needs.
type Config struct {
	Users *login.Users
	// SessionTTL is how long a login lasts (12 h when 0).
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure (serve over HTTPS).
	SecureCookie bool
	// Throttle limits logins (login.NewThrottle() when nil).
	Throttle *login.Throttle
	// Runedge is runedge's base URL; Token its bearer token.
	Runedge, Token string
	// Client talks to runedge (proxy.NewClient() when nil).
	Client *http.Client
	Log    *slog.Logger
}

// New returns the app server's handler.
func New(cfg Config) (http.Handler, error) {
	if cfg.Users == nil {
		return nil, errors.New("app: no users")
	}
	if cfg.Token == "" {
		return nil, errors.New("app: no runedge token")
	}
	if u, err := url.Parse(cfg.Runedge); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("app: runedge URL must be http(s)://host[:port]")
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Throttle == nil {
		cfg.Throttle = login.NewThrottle()
	}
	auth := &login.Auth{Users: cfg.Users, Sessions: login.NewSessions(cfg.SessionTTL), Secure: cfg.SecureCookie, Throttle: cfg.Throttle}
	fwd := &proxy.Forwarder{Runedge: cfg.Runedge, Token: cfg.Token, Client: cfg.Client, Log: cfg.Log}
	page, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(page))
	mux.HandleFunc("POST /login", auth.Login)
	mux.HandleFunc("POST /logout", auth.Logout)
	mux.Handle("GET /api/me", auth.Require(http.HandlerFunc(auth.Me)))
	mux.Handle("POST /api/chat", auth.Require(fwd.Handler("/v1/chat/completions")))
	mux.Handle("POST /api/responses", auth.Require(fwd.Handler("/v1/responses")))
	// Unknown API routes answer JSON, which is what the page reads.
	notFound := func(w http.ResponseWriter, r *http.Request) {
		login.WriteError(w, http.StatusNotFound, "invalid_request_error", "not_found", "No such route.")
	}
	mux.HandleFunc("GET /api/", notFound)
	mux.HandleFunc("POST /api/", notFound)
	return pageHeaders(sameOrigin(mux)), nil
}
