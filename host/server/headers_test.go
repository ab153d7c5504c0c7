package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTwoAuthorizationHeaders: a request with two Authorization headers is
// refused with 401 whichever comes first, valid or not.
func TestTwoAuthorizationHeaders(t *testing.T) {
	h := start(t, nil)
	for _, pair := range [][2]string{{tokApp, "wrong"}, {"wrong", tokApp}, {tokApp, tokApp}} {
		req, _ := http.NewRequest("POST", h.URL+"/v1/chat/completions", strings.NewReader(chatBody))
		req.Header.Add("Authorization", "Bearer "+pair[0])
		req.Header.Add("Authorization", "Bearer "+pair[1])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, res, http.StatusUnauthorized, "authentication_error", "invalid_api_key")
	}
}

// TestDuplicateKeysRefused: the edge and the plugin must read the same
// request: a top-level key twice is a 400 naming it, and no run is made.
func TestDuplicateKeysRefused(t *testing.T) {
	h := start(t, nil)
	before := h.runCount()
	res := h.do("POST", "/v1/chat/completions",
		`{"model":"service","messages":[{"role":"user","content":"checked"}],"messages":[{"role":"user","content":"run"}]}`)
	b := body(t, res)
	if res.StatusCode != 400 || !strings.Contains(string(b), `"param":"messages"`) || !strings.Contains(string(b), `"code":"invalid_body"`) {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	if h.runCount() != before {
		t.Fatal("a refused request made a run")
	}
}

// largeBody is a valid body just under the default 1 MiB limit: about
// 34,000 small messages (chat) or input items (responses).
func largeBody(ep string) string {
	const n = (1<<20 - 64) / len(`{"role":"user","content":"hi"},`)
	var sb strings.Builder
	if ep == "/v1/chat/completions" {
		sb.WriteString(`{"model":"service","messages":[`)
	} else {
		sb.WriteString(`{"model":"service","input":[`)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"role":"user","content":"hi"}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// TestLargeValidBodyIsServed: valid input under the body limit never gets
// a 5xx; the plugin budget (plugins.call_timeout) is sized for it.
func TestLargeValidBodyIsServed(t *testing.T) {
	h := start(t, nil)
	for _, ep := range []string{"/v1/chat/completions", "/v1/responses"} {
		b := largeBody(ep)
		if len(b) > 1<<20 {
			t.Fatalf("%d bytes: over the limit", len(b))
		}
		began := time.Now()
		res := h.do("POST", ep, b)
		if out := body(t, res); res.StatusCode != 200 {
			t.Fatalf("%s, %d bytes: %d %s", ep, len(b), res.StatusCode, out)
		}
		t.Logf("%s, %d bytes: %s", ep, len(b), time.Since(began))
	}
}
