package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/runner"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// uiLogin posts the login form with token and extra headers (name, value
// pairs).
func (h *harness) uiLogin(token string, headers ...string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest("POST", h.Admin+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	body(h.t, res)
	return res
}

// uiSession logs in with the admin token and returns the session cookie.
func (h *harness) uiSession() *http.Cookie {
	h.t.Helper()
	res := h.uiLogin(tokAdmin)
	for _, c := range res.Cookies() {
		if c.Name == "runedge_ui" && c.Value != "" {
			return c
		}
	}
	h.t.Fatalf("login: %d, no session cookie", res.StatusCode)
	return nil
}

// uiGet reads an operator page path with the cookie (nil: none).
func (h *harness) uiGet(path string, c *http.Cookie) (*http.Response, []byte) {
	h.t.Helper()
	req, err := http.NewRequest("GET", h.Admin+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if c != nil {
		req.AddCookie(c)
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return res, body(h.t, res)
}

func TestUILogin(t *testing.T) {
	h := start(t, nil)

	// Not logged in: the API answers 401 in the OpenAI shape, the page
	// sends to the login form.
	for _, p := range []string{"/ui/api/runs", "/ui/api/stream", "/ui/api/stats", "/ui/api/plugins", "/ui/api/runs/run_x"} {
		res, b := h.uiGet(p, nil)
		e := gjson.GetBytes(b, "error")
		if res.StatusCode != 401 || res.Header.Get("Content-Type") != "application/json" || e.Get("code").Str != "not_logged_in" ||
			e.Get("type").Str != "authentication_error" || !e.Get("param").Exists() || !e.Get("message").Exists() {
			t.Fatalf("%s without a session: %d %s", p, res.StatusCode, b)
		}
	}
	if res, _ := h.uiGet("/ui/", nil); res.StatusCode != 303 || res.Header.Get("Location") != "/ui/login" {
		t.Fatalf("page without a session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, b := h.uiGet("/ui/login", nil)
	if res.StatusCode != 200 || !strings.Contains(string(b), `name="token"`) {
		t.Fatalf("login page: %d %s", res.StatusCode, b)
	}

	// Wrong tokens, and a valid token that is not an admin's, are refused
	// without a cookie.
	for _, tok := range []string{"nope", tokApp, ""} {
		if res := h.uiLogin(tok); res.StatusCode != 401 || len(res.Cookies()) != 0 {
			t.Fatalf("login with %q: %d %v", tok, res.StatusCode, res.Cookies())
		}
	}

	res = h.uiLogin(tokAdmin)
	if res.StatusCode != 303 || res.Header.Get("Location") != "/ui/" {
		t.Fatalf("login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies: %v", cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/ui/" || c.MaxAge <= 0 ||
		c.Value == tokAdmin || strings.Contains(c.Value, tokAdmin) || len(c.Value) < 43 {
		t.Fatalf("session cookie: %+v", c)
	}
	if raw := res.Header.Get("Set-Cookie"); strings.Contains(raw, "Secure") {
		t.Fatalf("Secure on plain HTTP without admin.ui.secure_cookie: %s", raw)
	}

	res, b = h.uiGet("/ui/", c)
	if res.StatusCode != 200 || !strings.Contains(string(b), `src="/ui/static/app.js"`) || strings.Contains(string(b), tokAdmin) {
		t.Fatalf("page: %d %s", res.StatusCode, b)
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("page headers: %v", res.Header)
	}
	if res, b := h.uiGet("/ui/api/session", c); res.StatusCode != 200 || gjson.GetBytes(b, "token").Str != "ops" {
		t.Fatalf("session: %d %s", res.StatusCode, b)
	}
	// The script is served as JavaScript, and holds no token.
	res, b = h.uiGet("/ui/static/app.js", nil)
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || strings.Contains(string(b), tokAdmin) {
		t.Fatalf("app.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}

	for _, p := range []string{"/ui/static/", "/ui/static/index.html", "/ui/static/login.html"} {
		if res, _ := h.uiGet(p, nil); res.StatusCode != 404 {
			t.Fatalf("%s: %d, want only the assets public", p, res.StatusCode)
		}
	}

	// Logout ends the session server-side and clears the cookie.
	req, _ := http.NewRequest("POST", h.Admin+"/ui/logout", nil)
	req.AddCookie(c)
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body(t, res)
	if res.StatusCode != 303 || len(res.Cookies()) != 1 || res.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("logout: %d %v", res.StatusCode, res.Cookies())
	}
	if res, b := h.uiGet("/ui/api/runs", c); res.StatusCode != 401 {
		t.Fatalf("old cookie after logout: %d %s", res.StatusCode, b)
	}
}

func TestUILoginCrossSite(t *testing.T) {
	h := start(t, nil)
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "http://evil.example"},
	} {
		if res := h.uiLogin(tokAdmin, hdr...); res.StatusCode != 403 || len(res.Cookies()) != 0 {
			t.Fatalf("login with %v: %d %v", hdr, res.StatusCode, res.Cookies())
		}
	}
	// The page's own form: same origin.
	u, _ := url.Parse(h.Admin)
	if res := h.uiLogin(tokAdmin, "Sec-Fetch-Site", "same-origin", "Origin", "http://"+u.Host); res.StatusCode != 303 {
		t.Fatalf("same-origin login: %d", res.StatusCode)
	}
}

func TestUILoginThrottle(t *testing.T) {
	h := start(t, nil)
	for i := range 5 {
		if res := h.uiLogin("guess"); res.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i, res.StatusCode)
		}
	}
	// The address is now refused, even with the right token.
	res := h.uiLogin(tokAdmin)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || len(res.Cookies()) != 0 {
		t.Fatalf("after 5 failures: %d Retry-After %q %v", res.StatusCode, res.Header.Get("Retry-After"), res.Cookies())
	}
}

func TestUISecureCookie(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Admin.UI.SecureCookie = true })
	res := h.uiLogin(tokAdmin)
	if len(res.Cookies()) != 1 || !res.Cookies()[0].Secure {
		t.Fatalf("admin.ui.secure_cookie: %s", res.Header.Get("Set-Cookie"))
	}
}

func TestUIRunDetailEscaped(t *testing.T) {
	h := start(t, nil)
	c := h.uiSession()
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	reqBody, _ := json.Marshal(map[string]any{"model": "service", "messages": []map[string]string{{"role": "user", "content": evil}}})
	res := h.do("POST", "/v1/chat/completions", string(reqBody), "x-service-tenant-id", "acme")
	body(t, res)
	id := res.Header.Get("x-service-run-id")
	if res.StatusCode != 200 || id == "" {
		t.Fatalf("chat: %d", res.StatusCode)
	}
	res, b := h.uiGet("/ui/api/runs/"+id, c)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("detail: %d %s", res.StatusCode, b)
	}
	if strings.ContainsAny(string(b), "<>") {
		t.Fatalf("run JSON carries raw markup: %s", b)
	}
	if got := gjson.GetBytes(b, "input.0.content").Str; got != evil {
		t.Fatalf("input round trip: %q", got)
	}
	if out := gjson.GetBytes(b, "output").Str; !strings.Contains(out, evil) {
		t.Fatalf("output: %q", out)
	}
	if gjson.GetBytes(b, "tenant_id").Str != "acme" || !gjson.GetBytes(b, "duration_ms").Exists() {
		t.Fatalf("detail: %s", b)
	}
	// The list, filtered, finds it; other filters do not.
	for q, want := range map[string]int{"tenant_id=acme": 1, "tenant_id=other": 0, "endpoint=chat.completions": 1,
		"endpoint=responses": 0, "status=completed&endpoint=chat.completions": 1, "status=failed": 0} {
		res, b := h.uiGet("/ui/api/runs?"+q, c)
		if res.StatusCode != 200 || len(gjson.GetBytes(b, "data").Array()) != want || strings.ContainsAny(string(b), "<>") {
			t.Fatalf("list ?%s: %d %s", q, res.StatusCode, b)
		}
	}
	if res, b := h.uiGet("/ui/api/runs?status=bogus", c); res.StatusCode != 400 {
		t.Fatalf("bad status filter: %d %s", res.StatusCode, b)
	}
	if res, b := h.uiGet("/ui/api/runs/run_nope", c); res.StatusCode != 404 || gjson.GetBytes(b, "error.code").Str != "not_found" {
		t.Fatalf("unknown run: %d %s", res.StatusCode, b)
	}
	if res, b := h.uiGet("/ui/api/runs/"+id+"/events", c); res.StatusCode != 200 || !gjson.GetBytes(b, "data").IsArray() {
		t.Fatalf("events: %d %s", res.StatusCode, b)
	}
	// The charts read the same registry /metrics serves.
	res, b = h.uiGet("/ui/api/stats", c)
	if res.StatusCode != 200 || gjson.GetBytes(b, "samples.0.requests").Float() < 1 ||
		gjson.GetBytes(b, "duration.count").Float() != 1 || gjson.GetBytes(b, `requests_by_endpoint.chat\.completions`).Float() != 1 {
		t.Fatalf("stats: %d %s", res.StatusCode, b)
	}
}

// TestUIStream sees a run start and end on the live stream, after the
// admin listener's whole-request deadlines (read and write, here under a
// second) have passed: the stream sets its own.
func TestUIStream(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(50 * time.Millisecond)
		c.Limits.ReadHeaderTimeout = config.Dur(200 * time.Millisecond)
		c.Limits.ReadBodyTimeout = config.Dur(200 * time.Millisecond)
		c.Limits.WriteTimeout = config.Dur(200 * time.Millisecond)
	})
	c := h.uiSession()
	req, _ := http.NewRequest("GET", h.Admin+"/ui/api/stream", nil)
	req.AddCookie(c)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stream ended")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no stream line within 10 s")
		}
		return ""
	}
	for next() != ": ready" {
	}
	time.Sleep(1500 * time.Millisecond) // past the admin server's ReadTimeout and WriteTimeout
	chat := h.do("POST", "/v1/chat/completions", chatBody)
	body(t, chat)
	id := chat.Header.Get("x-service-run-id")
	var seen []string
	for len(seen) < 2 {
		l := next()
		if ev, ok := strings.CutPrefix(l, "event: "); ok {
			data := strings.TrimPrefix(next(), "data: ")
			if gjson.Get(data, "id").Str != id {
				t.Fatalf("event for another run: %s", data)
			}
			seen = append(seen, ev+":"+gjson.Get(data, "status").Str)
			if ev == "run.ended" && gjson.Get(data, "duration_ms").Int() <= 0 {
				t.Fatalf("ended run without duration: %s", data)
			}
		}
	}
	if seen[0] != "run.started:running" || seen[1] != "run.ended:completed" {
		t.Fatalf("events: %v", seen)
	}
}

func TestUISwapHistory(t *testing.T) {
	h := start(t, nil)
	c := h.uiSession()
	wasm, err := os.ReadFile(plugintest.Build(t, "./testdata/versioned/v2"))
	if err != nil {
		t.Fatal(err)
	}
	_, before := h.uiGet("/ui/api/plugins", c)
	// The built-in default runs natively: it has a version, no file digest.
	oldVersion := gjson.GetBytes(before, `plugins.#(stage=="chat.completions/translate").version`).Str
	if oldVersion != "builtin" || len(gjson.GetBytes(before, "swaps").Array()) != 0 {
		t.Fatalf("before: %s", before)
	}
	req, _ := http.NewRequest("PUT", h.Admin+"/admin/v1/plugins/chat.completions/translate", strings.NewReader(string(wasm)))
	req.Header.Set("Authorization", "Bearer "+tokAdmin)
	req.Header.Set("User-Agent", admin.CLIUserAgent+"/test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if b := body(t, res); res.StatusCode != 200 {
		t.Fatalf("swap: %d %s", res.StatusCode, b)
	}
	if _, b := h.uiGet("/ui/api/plugins", c); gjson.GetBytes(b, `plugins.#(stage=="chat.completions/translate").version`).Str != "v2" {
		t.Fatalf("plugins after swap: %s", b)
	}
	// A reload of the file puts the file's plugin back: recorded after
	// the swap, listed first.
	if err := h.srv.Reload(t.Context(), h.cfg); err != nil {
		t.Fatal(err)
	}
	_, b := h.uiGet("/ui/api/plugins", c)
	swaps := gjson.GetBytes(b, "swaps").Array()
	if len(swaps) != 2 {
		t.Fatalf("swaps: %s", b)
	}
	if swaps[0].Get("trigger").Str != "configuration file reload" || swaps[0].Get("what").Str != "reload" ||
		swaps[0].Get("changes.0.old.version").Str != "v2" || swaps[0].Get("changes.0.new.version").Str != oldVersion {
		t.Fatalf("reload record: %s", swaps[0].Raw)
	}
	sw := swaps[1]
	ch := sw.Get("changes").Array()
	if sw.Get("trigger").Str != "CLI, token ops" || !sw.Get("ok").Bool() || sw.Get("time").Int() <= 0 || len(ch) != 1 ||
		ch[0].Get("stage").Str != "chat.completions/translate" || ch[0].Get("old.version").Str != oldVersion ||
		ch[0].Get("new.version").Str != "v2" || ch[0].Get("new.sha256").Str == "" {
		t.Fatalf("swap record: %s", sw.Raw)
	}
}

// A reload that removes the admin token ends the sessions opened with it.
func TestUISessionEndsWithItsToken(t *testing.T) {
	h := start(t, nil)
	c := h.uiSession()
	if res, b := h.uiGet("/ui/api/runs", c); res.StatusCode != 200 {
		t.Fatalf("with a session: %d %s", res.StatusCode, b)
	}
	next := *h.cfg
	next.Tokens = next.Tokens[:2] // drop "ops", the admin token
	if err := h.srv.Reload(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	if res, b := h.uiGet("/ui/api/runs", c); res.StatusCode != 401 {
		t.Fatalf("after the token was removed: %d %s", res.StatusCode, b)
	}
}

// The operator page's run shows its drives: the lease token the store
// reads with the run (1 for a run driven once; one more at each takeover,
// as storetest.Leases checks on both drivers).
func TestUIRunShowsDrives(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"hello"}`)
	if res.StatusCode != 200 {
		t.Fatalf("response: %d %s", res.StatusCode, body(t, res))
	}
	res.Body.Close()
	run := res.Header.Get("X-Service-Run-Id")
	h.waitRun(run, func(r runner.Run) bool { return r.Status.Terminal() })
	ures, b := h.uiGet("/ui/api/runs/"+run, h.uiSession())
	if ures.StatusCode != 200 || gjson.GetBytes(b, "drives").Int() != 1 || gjson.GetBytes(b, "id").Str != run {
		t.Fatalf("operator page run: %d %.300s; want drives 1", ures.StatusCode, b)
	}
}
