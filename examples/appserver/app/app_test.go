package app_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"

	"github.com/runedge/runedge/examples/appserver/app"
	"github.com/runedge/runedge/examples/appserver/internal/runedgetest"
	"github.com/runedge/runedge/examples/appserver/login"
)

// newApp serves the whole app server in front of upstream, with one user,
// ada / pw, of tenant acme.
func newApp(t *testing.T, upstream string) string {
	t.Helper()
	hash, err := login.HashPassword("pw", 1000)
	if err != nil {
		t.Fatal(err)
	}
	users, err := login.NewUsers([]*login.User{{Login: "ada", ActorID: "u-ada", Name: "Ada Lovelace", Tenant: "acme", Password: hash}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.New(app.Config{Users: users, Runedge: upstream, Token: runedgetest.Token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// browser keeps cookies like a browser and writes down every response it
// receives, headers and body, so a test can search all of it.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	mu   sync.Mutex
	seen bytes.Buffer
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, base: base}
	b.c = &http.Client{Jar: jar, Transport: recorder{b}}
	return b
}

type recorder struct{ b *browser }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	dump, err := httputil.DumpResponse(res, true)
	if err != nil {
		return nil, err
	}
	r.b.mu.Lock()
	r.b.seen.Write(dump)
	r.b.mu.Unlock()
	return res, nil
}

// do sends a request and returns the response with its body read.
func (b *browser) do(method, path, body string, headers ...string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return res, string(out)
}

func (b *browser) login() {
	b.t.Helper()
	if res, body := b.do("POST", "/login", `{"login":"ada","password":"pw"}`); res.StatusCode != 200 {
		b.t.Fatalf("login: %d %s", res.StatusCode, body)
	}
}

const chatBody = `{"model":"service","messages":[{"role":"user","content":"Hello"}]}`

// Nothing reaches runedge without a session: the API answers 401 JSON.
func TestLoginRequired(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	b := newBrowser(t, newApp(t, rd.URL))
	for _, c := range []struct{ method, path, cookie string }{
		{"GET", "/api/me", ""},
		{"POST", "/api/chat", ""},
		{"POST", "/api/responses", ""},
		{"POST", "/api/chat", login.CookieName + "=ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	} {
		res, body := b.do(c.method, c.path, chatBody, "Cookie", c.cookie)
		if res.StatusCode != 401 || res.Header.Get("Content-Type") != "application/json" ||
			!strings.Contains(body, `"code":"login_required"`) {
			t.Errorf("%s %s: %d %q %s", c.method, c.path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	for _, tenant := range []string{"acme", "default"} {
		if runs := rd.Runs(tenant); len(runs) != 0 {
			t.Errorf("tenant %s has %d runs; refused requests reached runedge", tenant, len(runs))
		}
	}
}

func TestLoginAndLogout(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	base := newApp(t, rd.URL)
	b := newBrowser(t, base)

	res, wrongPw := b.do("POST", "/login", `{"login":"ada","password":"nope"}`)
	if res.StatusCode != 401 || len(res.Cookies()) != 0 || !strings.Contains(wrongPw, "Wrong user name or password") {
		t.Fatalf("wrong password: %d %v %s", res.StatusCode, res.Cookies(), wrongPw)
	}
	if _, wrongUser := b.do("POST", "/login", `{"login":"bob","password":"nope"}`); wrongUser != wrongPw {
		t.Fatalf("an unknown user reads differently from a wrong password:\n%s\n%s", wrongUser, wrongPw)
	}

	res, body := b.do("POST", "/login", `{"login":"ada","password":"pw"}`)
	if res.StatusCode != 200 || strings.Contains(body, "pbkdf2") {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	cs := res.Cookies()
	if len(cs) != 1 {
		t.Fatalf("cookies %v", cs)
	}
	c := cs[0]
	if c.Name != login.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || len(c.Value) < 26 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/, a long random value", c)
	}
	if res, body := b.do("GET", "/api/me", ""); res.StatusCode != 200 || !strings.Contains(body, `"tenant":"acme"`) {
		t.Fatalf("me: %d %s", res.StatusCode, body)
	}

	res, _ = b.do("POST", "/logout", "")
	if res.StatusCode != 204 || len(res.Cookies()) != 1 || res.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("logout: %d %v", res.StatusCode, res.Cookies())
	}
	// The old cookie is dead on the server, not only deleted in the browser.
	other := newBrowser(t, base)
	if res, _ := other.do("GET", "/api/me", "", "Cookie", c.Name+"="+c.Value); res.StatusCode != 401 {
		t.Fatalf("old session after logout: %d", res.StatusCode)
	}
}

// The runedge token appears in nothing the browser receives: the page, the
// login, the proxied answers (JSON and SSE), the errors.
func TestTokenNeverReachesBrowser(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	b := newBrowser(t, newApp(t, rd.URL))
	for _, p := range []string{"/", "/app.js", "/errors.js", "/stream.js", "/table.js", "/app.css"} {
		if res, _ := b.do("GET", p, ""); res.StatusCode != 200 {
			t.Fatalf("GET %s: %d", p, res.StatusCode)
		}
	}
	b.do("POST", "/login", `{"login":"ada","password":"wrong"}`)
	b.login()
	b.do("GET", "/api/me", "")
	b.do("POST", "/api/chat", chatBody)
	b.do("POST", "/api/chat", `{"model":"service","stream":true,"messages":[{"role":"user","content":"Stream"}]}`)
	b.do("POST", "/api/chat", `{"model":"service","messages":[{"role":"user","content":"/fail"}]}`)
	b.do("POST", "/api/chat", `{"model":"service","stream":true,"messages":[{"role":"user","content":"/fail-mid then"}]}`)
	b.do("POST", "/api/responses", `{"model":"service","stream":true,"input":"Hi"}`)
	b.do("POST", "/api/responses", `{"model":"wrong","input":"Hi"}`)
	b.do("POST", "/api/chat", chatBody, "X-Service-Session-Id", "sess_unknown")
	b.do("POST", "/logout", "")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	down := newBrowser(t, newApp(t, "http://"+ln.Addr().String()))
	down.login()
	if res, _ := down.do("POST", "/api/chat", chatBody); res.StatusCode != 502 {
		t.Fatalf("runedge down: %d", res.StatusCode)
	}

	all := b.seen.String() + down.seen.String()
	// The transcript holds what the test meant to search, so a recorder
	// that saw nothing cannot pass.
	for _, want := range []string{"src=\"app.js\"", "You said: Hello", "data: [DONE]", "X-Service-Run-Id",
		"provider_error", "Set-Cookie", "upstream_unavailable", "response.completed"} {
		if !strings.Contains(all, want) {
			t.Fatalf("transcript lacks %q", want)
		}
	}
	if strings.Contains(all, runedgetest.Token) || strings.Contains(all, "Bearer") {
		i := max(strings.Index(all, runedgetest.Token), strings.Index(all, "Bearer"))
		t.Fatalf("the browser received the token: …%s…", all[max(0, i-200):min(len(all), i+100)])
	}
}

// A POST from another site is refused even with the user's cookie.
func TestCrossOriginRefused(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	base := newApp(t, rd.URL)
	b := newBrowser(t, base)
	b.login()
	if res, body := b.do("POST", "/api/chat", chatBody, "Origin", "http://evil.example"); res.StatusCode != 403 {
		t.Fatalf("cross-origin: %d %s", res.StatusCode, body)
	}
	if res, body := b.do("POST", "/api/chat", chatBody, "Origin", base); res.StatusCode != 200 {
		t.Fatalf("same origin: %d %s", res.StatusCode, body)
	}
}

// The page is served with a policy that allows only its own scripts.
func TestPage(t *testing.T) {
	b := newBrowser(t, newApp(t, "http://127.0.0.1:1"))
	res, body := b.do("GET", "/", "")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, `id="login-form"`) {
		t.Fatalf("page: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if res, _ := b.do("GET", "/app.js", ""); !strings.Contains(res.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("app.js type %q", res.Header.Get("Content-Type"))
	}
	if res, body := b.do("GET", "/api/nope", ""); res.StatusCode != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("unknown API route: %d %s", res.StatusCode, body)
	}
}
