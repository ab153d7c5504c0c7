package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/runedge/runedge/examples/appserver/internal/runedgetest"
	"github.com/runedge/runedge/examples/appserver/proxy"
	"github.com/runedge/runedge/runner"
)

// A chat through the proxy reaches runedge as the logged-in user and comes
// back with runedge's status, run headers and body.
func TestChatRecordedAsUser(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	b := newBrowser(t, rd.URL, 0)
	res := b.post(t.Context(), "/api/chat", `{"model":"service","messages":[{"role":"user","content":"Hello there"}]}`)
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var cc struct {
		Object  string
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(body, &cc); err != nil || cc.Object != "chat.completion" || len(cc.Choices) != 1 ||
		cc.Choices[0].Message.Content != "You said: Hello there" {
		t.Fatalf("body %s (%v)", body, err)
	}
	runID := res.Header.Get("X-Service-Run-Id")
	if !strings.HasPrefix(runID, "run_") || res.Header.Get("X-Service-Model-Id") != "service" {
		t.Fatalf("run headers missing: %v", res.Header)
	}
	run := rd.Run(runID, tenant)
	want := runner.Actor{ID: actorID, Type: "user", Name: actorName}
	if run.Actor != want || run.TenantID != tenant || run.Status != runner.StatusCompleted {
		t.Fatalf("run %+v, want actor %+v tenant %s completed", run, want, tenant)
	}
	if run.SessionID != res.Header.Get("X-Service-Session-Id") || run.ThreadID != res.Header.Get("X-Service-Thread-Id") {
		t.Fatalf("run %s/%s, headers %v", run.SessionID, run.ThreadID, res.Header)
	}
	if !strings.HasPrefix(run.RequestID, "req_") {
		t.Fatalf("request id %q: the app server's id should be recorded", run.RequestID)
	}
}

// Refusals and failures come back exactly as runedge sent them to a direct
// caller: same status, same headers, same body.
func TestErrorsPassThrough(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	b := newBrowser(t, rd.URL, 0)
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
		run              bool // a run was created: run headers expected
	}{
		{"provider failure", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"/fail now"}]}`, 502, "provider_error", true},
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}`, 404, "model_not_found", false},
		{"invalid body", "/v1/responses", `{"model":"service","input":`, 400, "invalid_body", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			route := map[string]string{"/v1/chat/completions": "/api/chat", "/v1/responses": "/api/responses"}[tc.path]
			got := b.post(t.Context(), route, tc.body)
			gotBody := readAll(t, got)
			want := direct(t, rd, tc.path, tc.body)
			wantBody := readAll(t, want)
			if got.StatusCode != tc.status || want.StatusCode != tc.status {
				t.Fatalf("status %d via proxy, %d direct; want %d: %s", got.StatusCode, want.StatusCode, tc.status, gotBody)
			}
			if code := errorCode(t, gotBody); code != tc.code {
				t.Fatalf("code %q, want %q", code, tc.code)
			}
			if !tc.run && !bytes.Equal(gotBody, wantBody) {
				t.Fatalf("body via proxy %s\ndirect %s", gotBody, wantBody)
			}
			for _, h := range []string{"Content-Type", "X-Service-Model-Id"} {
				if got.Header.Get(h) != want.Header.Get(h) {
					t.Errorf("%s: %q via proxy, %q direct", h, got.Header.Get(h), want.Header.Get(h))
				}
			}
			for _, h := range []string{"X-Service-Run-Id", "X-Service-Session-Id", "X-Service-Thread-Id"} {
				if (got.Header.Get(h) != "") != tc.run {
					t.Errorf("%s = %q; a run was created: %v", h, got.Header.Get(h), tc.run)
				}
			}
			if tc.run {
				run := rd.Run(got.Header.Get("X-Service-Run-Id"), tenant)
				if run.Status != runner.StatusFailed || run.StatusReason != runner.ReasonProviderError {
					t.Fatalf("run %+v", run)
				}
			}
		})
	}
}

// A run continues its session when the page sends the ids back.
func TestSessionContinues(t *testing.T) {
	rd := runedgetest.Start(t, 0)
	b := newBrowser(t, rd.URL, 0)
	first := b.post(t.Context(), "/api/chat", `{"model":"service","messages":[{"role":"user","content":"one"}]}`)
	readAll(t, first)
	sess, thread := first.Header.Get("X-Service-Session-Id"), first.Header.Get("X-Service-Thread-Id")
	second := b.post(t.Context(), "/api/responses", `{"model":"service","input":"two"}`,
		"X-Service-Session-Id", sess, "X-Service-Thread-Id", thread)
	readAll(t, second)
	if second.StatusCode != 200 || second.Header.Get("X-Service-Session-Id") != sess || second.Header.Get("X-Service-Thread-Id") != thread {
		t.Fatalf("second: %d, session %q thread %q; want %q %q", second.StatusCode,
			second.Header.Get("X-Service-Session-Id"), second.Header.Get("X-Service-Thread-Id"), sess, thread)
	}
	if run := rd.Run(second.Header.Get("X-Service-Run-Id"), tenant); run.SessionID != sess || run.ThreadID != thread {
		t.Fatalf("run %+v", run)
	}
}

// upstreamRecorder is a stand-in for runedge that records what arrives and
// answers with bytes and headers no real runedge would send, to check that
// nothing is normalised on the way.
type upstreamRecorder struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
	calls  int
}

const oddBody = "{\"model\":\"service\",  \"messages\":[{\"role\":\"user\",\"content\":\"Gr\u00fc\u00dfe \\u00e9\"}],\r\n\"unknown\":[1, 2,3]}\n"

const oddReply = "not json at all \x00\xff\r\n\r\ndata: still passes\n\n"

func (u *upstreamRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.header, u.body = r.Header.Clone(), b
	u.calls++
	u.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/x-odd; charset=latin1")
	h.Set("X-Service-Run-Id", "run_fake")
	h.Set("X-Service-Session-Id", "sess_fake")
	h.Set("X-Service-Thread-Id", "thread_fake")
	h.Set("X-Service-Model-Id", "service")
	h["X-Multi"] = []string{"a", "b"}
	h.Set("Connection", "X-Hop")
	h.Set("X-Hop", "connection-only")
	h.Set("Keep-Alive", "timeout=5")
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, oddReply)
}

// The body goes upstream byte for byte; the answer comes back byte for
// byte with its status and end-to-end headers; the identity comes from the
// session, whatever the page sends.
func TestExactForwarding(t *testing.T) {
	up := &upstreamRecorder{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	b := newBrowser(t, srv.URL, 0)
	res := b.post(t.Context(), "/api/chat", oddBody,
		"Authorization", "Bearer from-the-page",
		"X-Service-Actor-Id", "mallory", "X-Service-Actor-Type", "service", "X-Service-Actor-Name", "Mallory",
		"X-Service-Tenant-Id", "other-tenant", "X-Service-Request-Id", "page-chosen",
		"X-Service-Session-Id", "sess_from_page", "Accept", "text/event-stream", "X-Forwarded-For", "10.0.0.1")
	got := readAll(t, res)

	if res.StatusCode != http.StatusTeapot || string(got) != oddReply {
		t.Fatalf("status %d body %q; want 418 %q", res.StatusCode, got, oddReply)
	}
	for _, h := range []string{"Content-Type", "X-Service-Run-Id", "X-Service-Session-Id", "X-Service-Thread-Id", "X-Service-Model-Id"} {
		if res.Header.Get(h) == "" {
			t.Errorf("header %s lost", h)
		}
	}
	if v := res.Header.Values("X-Multi"); len(v) != 2 || v[0] != "a" || v[1] != "b" {
		t.Errorf("X-Multi = %q", v)
	}
	for _, h := range []string{"X-Hop", "Keep-Alive"} {
		if v := res.Header.Get(h); v != "" {
			t.Errorf("hop-by-hop %s passed: %q", h, v)
		}
	}

	up.mu.Lock()
	defer up.mu.Unlock()
	if string(up.body) != oddBody {
		t.Fatalf("upstream body %q, want %q", up.body, oddBody)
	}
	for h, want := range map[string]string{
		"Authorization": "Bearer " + runedgetest.Token, "X-Service-Actor-Id": actorID,
		"X-Service-Actor-Type": "user", "X-Service-Actor-Name": actorName, "X-Service-Tenant-Id": tenant,
		"X-Service-Session-Id": "sess_from_page", "Accept": "text/event-stream", "Content-Type": "application/json",
	} {
		if v := up.header.Values(h); len(v) != 1 || v[0] != want {
			t.Errorf("upstream %s = %q, want %q", h, v, want)
		}
	}
	if v := up.header.Get("X-Service-Request-Id"); !strings.HasPrefix(v, "req_") {
		t.Errorf("request id %q: the app server sets its own", v)
	}
	for _, h := range []string{"Cookie", "X-Forwarded-For"} {
		if v := up.header.Get(h); v != "" {
			t.Errorf("upstream got %s: %q", h, v)
		}
	}
}

// When runedge cannot be reached the page gets a JSON error that says so
// without naming where runedge is.
func TestRunedgeDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	b := newBrowser(t, "http://"+addr, 0)
	res := b.post(t.Context(), "/api/chat", `{"model":"service","messages":[]}`)
	body := readAll(t, res)
	if res.StatusCode != http.StatusBadGateway || errorCode(t, body) != "upstream_unavailable" ||
		res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	_, port, _ := net.SplitHostPort(addr)
	if strings.Contains(string(body), port) {
		t.Fatalf("body names the upstream: %s", body)
	}
}

// A body over the limit is refused before anything is sent upstream.
func TestBodyTooLarge(t *testing.T) {
	up := &upstreamRecorder{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	b := newBrowser(t, srv.URL, 64)
	res := b.post(t.Context(), "/api/chat", `{"model":"service","messages":[{"role":"user","content":"`+strings.Repeat("x", 64)+`"}]}`)
	body := readAll(t, res)
	if res.StatusCode != http.StatusRequestEntityTooLarge || errorCode(t, body) != "body_too_large" {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.calls != 0 {
		t.Fatalf("upstream called %d times", up.calls)
	}
}

// Forwarder refuses to forward without a user, should it ever be mounted
// without login.Auth.Require.
func TestForwardNeedsUser(t *testing.T) {
	up := &upstreamRecorder{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	fwd := &proxy.Forwarder{Runedge: srv.URL, Token: runedgetest.Token}
	rec := httptest.NewRecorder()
	fwd.Handler("/v1/chat/completions").ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), "POST", "/api/chat", strings.NewReader("{}")))
	if rec.Code != http.StatusUnauthorized || up.calls != 0 {
		t.Fatalf("%d, upstream calls %d", rec.Code, up.calls)
	}
}
