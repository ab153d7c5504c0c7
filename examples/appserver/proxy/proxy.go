// Package proxy forwards a logged-in user's request to runedge. The
// browser never holds the runedge token: it sends its body here, and the
// app server adds the bearer token and the user's identity before passing
// the body on unchanged. The answer (status, headers, body, SSE streams)
// comes back untouched, so the page sees exactly what runedge said,
// including the x-service-* run headers.
package proxy

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/runedge/runedge/examples/appserver/login"
)

// Headers the proxy sets or passes on.
const (
	HeaderActorID   = "X-Service-Actor-Id"
	HeaderActorType = "X-Service-Actor-Type"
	HeaderActorName = "X-Service-Actor-Name"
	HeaderTenantID  = "X-Service-Tenant-Id"
	HeaderSessionID = "X-Service-Session-Id"
	HeaderThreadID  = "X-Service-Thread-Id"
	HeaderRequestID = "X-Service-Request-Id"
)

// DefaultMaxBody matches runedge's default body limit.
const DefaultMaxBody = 1 << 20

// Forwarder sends requests to one runedge.
type Forwarder struct {
	// Runedge is runedge's base URL, e.g. http://127.0.0.1:8080.
	Runedge string
	// Token is the bearer token; it is only ever sent upstream.
	Token string
	// Client defaults to NewClient().
	Client *http.Client
	// MaxBody bounds a request body (DefaultMaxBody when 0).
	MaxBody int64
	Log     *slog.Logger
}

// NewClient returns a client for streaming to runedge: no overall timeout
// (an answer streams for as long as it takes; the browser going away ends
// it), no redirects, and no transparent gzip, which would rewrite the body
// and its headers.
func NewClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Handler forwards POSTs to path on runedge (e.g. /v1/chat/completions).
// It must run behind login.Auth.Require.
func (f *Forwarder) Handler(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.forward(w, r, path)
	})
}

func (f *Forwarder) forward(w http.ResponseWriter, r *http.Request, path string) {
	user := login.UserFrom(r.Context())
	if user == nil { // a wiring mistake: never forward anonymously
		login.WriteError(w, http.StatusUnauthorized, "authentication_error", "login_required", "Please log in.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxBody()))
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			login.WriteError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large", "The message is too long.")
		}
		return // otherwise the browser went away while sending
	}
	// The request context ends when the browser goes away; the upstream
	// request ends with it, and runedge cancels the run.
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, strings.TrimRight(f.Runedge, "/")+path, bytes.NewReader(body))
	if err != nil {
		f.unavailable(w, err)
		return
	}
	upstreamHeaders(out.Header, r.Header, user, f.Token)
	res, err := f.client().Do(out)
	if err != nil {
		if r.Context().Err() == nil {
			f.unavailable(w, err)
		}
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	stream(w, res.Body)
}

// upstreamHeaders builds runedge's request headers from scratch. Only the
// listed browser headers pass; the identity comes from the session, so a
// page cannot claim to be someone else by sending x-service-actor-id, and
// the app's cookies never leave the app.
func upstreamHeaders(out, in http.Header, u *login.User, token string) {
	for _, name := range []string{"Content-Type", "Accept", HeaderSessionID, HeaderThreadID} {
		if v := in.Values(name); len(v) > 0 {
			out[name] = v
		}
	}
	if out.Get("Content-Type") == "" {
		out.Set("Content-Type", "application/json")
	}
	out.Set("Authorization", "Bearer "+token)
	out.Set(HeaderActorID, u.ActorID)
	out.Set(HeaderActorType, "user")
	out.Set(HeaderActorName, u.Name)
	out.Set(HeaderTenantID, u.Tenant)
	// The request id is the app server's own: runedge records it on the
	// run, so the app's logs and runedge's history can be joined.
	out.Set(HeaderRequestID, "req_"+rand.Text())
}

// stream copies the body, flushing after every read so each SSE event
// reaches the browser when runedge sends it, not when a buffer fills.
func stream(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // browser gone
			}
			if ferr := rc.Flush(); ferr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF, or runedge or the browser went away mid-body
		}
	}
}

// unavailable answers when runedge cannot be reached. The cause is logged
// here and never sent: the page needs to know what to do, not the address.
func (f *Forwarder) unavailable(w http.ResponseWriter, err error) {
	f.log().Warn("runedge unreachable", "err", err)
	login.WriteError(w, http.StatusBadGateway, "api_error", "upstream_unavailable",
		"The assistant service cannot be reached right now.")
}

func (f *Forwarder) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return defaultClient
}

var defaultClient = NewClient()

func (f *Forwarder) maxBody() int64 {
	if f.MaxBody > 0 {
		return f.MaxBody
	}
	return DefaultMaxBody
}

func (f *Forwarder) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.Default()
}
