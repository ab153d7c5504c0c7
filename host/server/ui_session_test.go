package server

import (
	"bufio"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
)

// uiStream opens the live run stream with cookie c over a real connection
// and returns a channel closed when the server ends the stream.
func (h *harness) uiStream(c *http.Cookie) <-chan struct{} {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), "GET", h.Admin+"/ui/api/stream", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.AddCookie(c)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		h.t.Fatalf("stream: %d %s", res.StatusCode, body(h.t, res))
	}
	ready := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if sc.Text() == ": ready" {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-ended:
		h.t.Fatal("stream ended before it was ready")
	case <-time.After(10 * time.Second):
		h.t.Fatal("stream not ready within 10 s")
	}
	return ended
}

// wantEnded waits for a stream to end: within a few seconds, not at the
// next keepalive or the session's end hours later.
func wantEnded(t *testing.T, ended <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatalf("the live stream is still open 5 s after %s", after)
	}
}

// The operator page's live stream ends with its session, whatever ends
// it: logout, the session's lifetime, or a reload that rotates the admin
// token's hash or removes the token. Every request after gets 401.
func TestUISessionStreamEndsWithSession(t *testing.T) {
	rotate := func(c *config.Config) {
		c.Tokens = slices.Clone(c.Tokens)
		c.Tokens[2].Hash = auth.HashToken("tok-admin-rotated")
	}
	remove := func(c *config.Config) { c.Tokens = slices.Clone(c.Tokens[:2]) }
	for _, tc := range []struct {
		name   string
		ttl    time.Duration
		end    func(h *harness, c *http.Cookie)
		others bool // other sessions of the same token end too
	}{
		{name: "logout", end: func(h *harness, c *http.Cookie) {
			req, _ := http.NewRequest("POST", h.Admin+"/ui/logout", nil)
			req.AddCookie(c)
			res, err := noRedirect.Do(req)
			if err != nil {
				h.t.Fatal(err)
			}
			body(h.t, res)
		}},
		{name: "expiry", ttl: 1500 * time.Millisecond, end: func(*harness, *http.Cookie) {}, others: true},
		{name: "token hash rotated", end: func(h *harness, _ *http.Cookie) { h.reloadWith(rotate) }, others: true},
		{name: "token removed", end: func(h *harness, _ *http.Cookie) { h.reloadWith(remove) }, others: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, func(c *config.Config) {
				if tc.ttl > 0 {
					c.Admin.UI.SessionTTL = config.Dur(tc.ttl)
				}
			})
			c, other := h.uiSession(), h.uiSession()
			ended, otherEnded := h.uiStream(c), h.uiStream(other)
			tc.end(h, c)
			wantEnded(t, ended, tc.name)
			for _, p := range []string{"/ui/api/runs", "/ui/api/session", "/ui/api/stream"} {
				if res, b := h.uiGet(p, c); res.StatusCode != 401 {
					t.Fatalf("%s after %s: %d %s", p, tc.name, res.StatusCode, b)
				}
			}
			if tc.others {
				wantEnded(t, otherEnded, tc.name)
				return
			}
			// Logout ends that session only.
			select {
			case <-otherEnded:
				t.Fatal("logout ended another session's stream")
			case <-time.After(200 * time.Millisecond):
			}
			if res, b := h.uiGet("/ui/api/session", other); res.StatusCode != 200 {
				t.Fatalf("another session after logout: %d %s", res.StatusCode, b)
			}
		})
	}
}

// reloadWith reloads the server with its configuration edited by edit.
func (h *harness) reloadWith(edit func(*config.Config)) {
	h.t.Helper()
	next := *h.cfg
	edit(&next)
	if err := next.Validate(); err != nil {
		h.t.Fatal(err)
	}
	if err := h.srv.Reload(h.t.Context(), &next); err != nil {
		h.t.Fatal(err)
	}
}
