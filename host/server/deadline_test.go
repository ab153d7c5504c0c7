package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// rawRequest opens a TCP connection to base (http://host:port) and writes
// a request's head; the body, if any, is the caller's to send.
func rawRequest(t *testing.T, base, method, path, token string, contentLength int, extra ...string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: runedge\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		method, path, token, contentLength)
	for _, e := range extra {
		head += e + "\r\n"
	}
	if _, err := c.Write([]byte(head + "\r\n")); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle writes b to c every 300 ms until the returned stop is called.
func trickle(c net.Conn, b string) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(300 * time.Millisecond):
				if _, err := c.Write([]byte(b)); err != nil {
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// readStatus reads the response head from c within d.
func readStatus(t *testing.T, c net.Conn, d time.Duration) (*http.Response, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	return http.ReadResponse(bufio.NewReader(c), nil)
}

// stalledStream starts a long streaming chat completion on a raw
// connection with a small receive buffer, reads the response head and then
// stops reading. It returns the run id.
func stalledStream(t *testing.T, h *harness) string {
	t.Helper()
	reqBody := `{"model":"service","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("w ", 200_000) + `"}]}`
	c := rawRequest(t, h.URL, "POST", "/v1/chat/completions", tokApp, len(reqBody))
	c.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := c.Write([]byte(reqBody)); err != nil {
		t.Fatal(err)
	}
	res, err := readStatus(t, c, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	return checkRunHeaders(t, res.Header)
}

// TestStalledClientIsCutOff: a streaming client that stops reading is cut
// off after limits.write_timeout; its run is recorded cancelled with
// reason client_stalled and its in-flight slot is free, long before
// run_timeout.
func TestStalledClientIsCutOff(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.WriteTimeout = config.Dur(500 * time.Millisecond)
		c.Limits.RunTimeout = config.Dur(time.Minute)
		c.Limits.MaxInFlight = 1
	})
	began := time.Now()
	id := stalledStream(t, h)
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientStalled {
		t.Fatalf("stalled run recorded %s/%s, want cancelled/client_stalled", r.Status, r.StatusReason)
	}
	if el := time.Since(began); el > 20*time.Second {
		t.Fatalf("the stalled client held its run for %s", el)
	}
	// The slot is free: another request gets through (max_in_flight 1).
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("after the stalled client: %d %s", res.StatusCode, body(t, res))
	}
}

// TestRunTimeoutHoldsWhileAWriteBlocks: with a write timeout longer than
// the run timeout, a write blocked on a client that stopped reading does
// not keep the run past run_timeout.
func TestRunTimeoutHoldsWhileAWriteBlocks(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.WriteTimeout = config.Dur(time.Minute)
		c.Limits.RunTimeout = config.Dur(time.Second)
	})
	began := time.Now()
	id := stalledStream(t, h)
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonTimeout {
		t.Fatalf("run recorded %s/%s, want failed/timeout", r.Status, r.StatusReason)
	}
	if el := time.Since(began); el > 15*time.Second {
		t.Fatalf("run_timeout 1s took %s with a blocked write", el)
	}
	// The run is recorded before its handler returns and frees its
	// in-flight slot; the slot must be freed soon after, blocked write or
	// not.
	for deadline := time.Now().Add(5 * time.Second); h.srv.Runs().InFlight() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs in flight 5 s after the run ended", h.srv.Runs().InFlight())
		}
	}
}

// TestTrickledBodyIsCutOff: a body sent one byte at a time is cut off at
// limits.read_body_timeout with 408, on both listeners.
func TestTrickledBodyIsCutOff(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.ReadBodyTimeout = config.Dur(time.Second) })
	for _, tc := range []struct{ base, method, path, token string }{
		{h.URL, "POST", "/v1/chat/completions", tokApp},
		{h.Admin, "PUT", "/admin/v1/plugins/translate", tokAdmin},
	} {
		c := rawRequest(t, tc.base, tc.method, tc.path, tc.token, 1000)
		stop := trickle(c, "{")
		began := time.Now()
		res, err := readStatus(t, c, 10*time.Second)
		stop()
		if err != nil {
			t.Fatalf("%s%s: no reply to a trickled body: %v", tc.base, tc.path, err)
		}
		if res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("%s%s: status %d, want 408", tc.base, tc.path, res.StatusCode)
		}
		if el := time.Since(began); el > 5*time.Second {
			t.Fatalf("%s%s: cut off after %s", tc.base, tc.path, el)
		}
	}
}

// TestTrickledHeadersAreCutOff: headers that never end are cut off at
// limits.read_header_timeout, on both listeners.
func TestTrickledHeadersAreCutOff(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.ReadHeaderTimeout = config.Dur(500 * time.Millisecond) })
	for _, base := range []string{h.URL, h.Admin} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: runedge\r\n"))
		began := time.Now()
		go func() {
			for i := 0; i < 50; i++ {
				time.Sleep(200 * time.Millisecond)
				if _, err := c.Write([]byte("X-Slow: 1\r\n")); err != nil {
					return
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				break // closed by the server (or our deadline, checked below)
			}
		}
		if el := time.Since(began); el > 5*time.Second {
			t.Fatalf("%s: trickled headers held the connection for %s", base, el)
		}
	}
}

// TestTokenCheckedBeforeBody: a request with a bad token is answered 401
// from its headers alone, without runedge waiting for (or reading) its
// body, on both listeners; a non-admin token gets 403 from the admin API
// the same way.
func TestTokenCheckedBeforeBody(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct {
		base, method, path, token string
		want                      int
	}{
		{h.URL, "POST", "/v1/chat/completions", "wrong", 401},
		{h.URL, "POST", "/v1/responses", "wrong", 401},
		{h.Admin, "PUT", "/admin/v1/plugins/translate", "wrong", 401},
		{h.Admin, "PUT", "/admin/v1/plugins/translate", tokApp, 403},
	} {
		// A 60 MiB body is announced and never sent.
		c := rawRequest(t, tc.base, tc.method, tc.path, tc.token, 60<<20)
		res, err := readStatus(t, c, 5*time.Second)
		if err != nil {
			t.Fatalf("%s %s: no answer before the body: %v", tc.method, tc.path, err)
		}
		if res.StatusCode != tc.want {
			t.Fatalf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.want)
		}
	}
}

// TestAdminUploadLimit: admin uploads have their own size limit.
func TestAdminUploadLimit(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.MaxAdminBodyBytes = 1000 })
	res, b := h.admin("PUT", "/admin/v1/plugins/translate", "application/wasm", make([]byte, 2000), tokAdmin)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
}

// TestTrickledGetBodyIsCutOff: GET /v1/responses/{id} honours a JSON body
// (openai-go sends {"stream":true} there), and reads it under
// limits.read_body_timeout like any body: a GET that trickles its body
// does not hold the connection past the limit.
func TestTrickledGetBodyIsCutOff(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.ReadBodyTimeout = config.Dur(time.Second) })
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"hello"}`)
	id := gjson.GetBytes(body(t, res), "id").Str
	if res.StatusCode != 200 || id == "" {
		t.Fatalf("create: %d", res.StatusCode)
	}
	c := rawRequest(t, h.URL, "GET", "/v1/responses/"+id, tokApp, 1000)
	defer trickle(c, " ")()
	began := time.Now()
	got, err := readStatus(t, c, 20*time.Second)
	el := time.Since(began)
	if err != nil {
		t.Fatalf("no reply to a trickled GET body within 20 s: %v", err)
	}
	if got.StatusCode != http.StatusRequestTimeout || el > 3*time.Second {
		t.Fatalf("trickled GET body: status %d after %s; want 408 within the 1 s body limit", got.StatusCode, el)
	}
}
