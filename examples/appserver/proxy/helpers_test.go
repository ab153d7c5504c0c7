package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/examples/appserver/internal/runedgetest"
	"github.com/runedge/runedge/examples/appserver/login"
	"github.com/runedge/runedge/examples/appserver/proxy"
)

// The logged-in user of every test.
const (
	actorID   = "u-ada"
	actorName = "Ada Lovelace"
	tenant    = "acme"
)

// browser is a logged-in browser in front of a proxy to upstream.
type browser struct {
	t      *testing.T
	url    string
	cookie *http.Cookie
}

// newBrowser serves the two proxy routes behind login and logs a user in.
func newBrowser(t *testing.T, upstream string, maxBody int64) *browser {
	t.Helper()
	hash, err := login.HashPassword("pw", 1000)
	if err != nil {
		t.Fatal(err)
	}
	u := &login.User{Login: "ada", ActorID: actorID, Name: actorName, Tenant: tenant, Password: hash}
	users, err := login.NewUsers([]*login.User{u})
	if err != nil {
		t.Fatal(err)
	}
	auth := &login.Auth{Users: users, Sessions: login.NewSessions(time.Hour)}
	fwd := &proxy.Forwarder{Runedge: upstream, Token: runedgetest.Token, MaxBody: maxBody}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", auth.Require(fwd.Handler("/v1/chat/completions")))
	mux.Handle("POST /api/responses", auth.Require(fwd.Handler("/v1/responses")))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	id := auth.Sessions.Create(users.Check("ada", "pw"))
	return &browser{t: t, url: srv.URL, cookie: &http.Cookie{Name: login.CookieName, Value: id}}
}

// post sends body to path with the session cookie; headers are name,
// value pairs.
func (b *browser) post(ctx context.Context, path, body string, headers ...string) *http.Response {
	b.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(b.cookie)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// direct sends what the proxy should send: the body with the token and the
// user's identity, straight to runedge.
func direct(t *testing.T, rd *runedgetest.Runedge, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rd.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+runedgetest.Token)
	req.Header.Set(proxy.HeaderActorID, actorID)
	req.Header.Set(proxy.HeaderActorType, "user")
	req.Header.Set(proxy.HeaderActorName, actorName)
	req.Header.Set(proxy.HeaderTenantID, tenant)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// errorCode returns error.code of an error body.
func errorCode(t *testing.T, b []byte) string {
	t.Helper()
	var e struct{ Error struct{ Code string } }
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not an error body: %v: %s", err, b)
	}
	return e.Error.Code
}

// nextEvent reads one SSE event (up to its blank line) and returns its
// data lines joined.
func nextEvent(t *testing.T, r *bufio.Reader) (string, bool) {
	t.Helper()
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return strings.Join(data, "\n"), len(data) > 0
		}
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(data) > 0 {
				return strings.Join(data, "\n"), true
			}
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
}
