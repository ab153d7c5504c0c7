package server

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamBurstWrites: chunks that reach the edge together leave it
// together. The openai upstream writes its 20 chunks in one piece (as
// bench-edge's mock does, and as a model server does when it falls behind
// its own tokens), so the edge has the whole answer at once: it must not
// spend a write on each chunk.
func TestStreamBurstWrites(t *testing.T) {
	var writes atomic.Int64
	h := countingEdge(t, stream20Upstream(t, false), &writes)
	for _, tc := range []struct{ name, path, body, delta string }{
		{"chat", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hello"}]}`, `"content":"tok`},
		{"responses", "/v1/responses", `{"model":"service","input":"hello","stream":true}`, "event: response.output_text.delta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.do("GET", "/v1/models", "").Body.Close() // open the connection
			most := int64(0)
			for range 20 {
				before := writes.Load()
				b := postOK(t, h, tc.path, tc.body)
				if n := strings.Count(string(b), tc.delta); n != 20 {
					t.Fatalf("%d deltas, want 20:\n%s", n, b)
				}
				if !bytes.Contains(b, []byte("[DONE]")) && !bytes.Contains(b, []byte("response.completed")) {
					t.Fatalf("stream did not end:\n%s", b)
				}
				most = max(most, writes.Load()-before)
			}
			t.Logf("20 deltas in one burst: at most %d writes per stream", most)
			if most > 3 {
				t.Errorf("20 deltas that arrived together took up to %d writes, want at most 3", most)
			}
		})
	}
}

// postOK posts body to path and returns the whole reply, which must be a
// 200.
func postOK(t *testing.T, h *harness, path, body string) []byte {
	t.Helper()
	res := h.do("POST", path, body)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("status %d, %v: %s", res.StatusCode, err, b)
	}
	return b
}

// TestStreamBurstNotHeldBack: holding a burst's chunks for one write never
// holds one back from the network. The upstream sends a content chunk and
// a finish chunk together, then waits, before [DONE], until the client has
// the content: the edge must write the content while it waits for more,
// though the event after it had already arrived.
func TestStreamBurstNotHeldBack(t *testing.T) {
	seen, quit := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sseStart(w)
		sseSend(w, contentChunk("first"), contentChunk(" second"),
			`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		select {
		case <-seen:
		case <-quit:
		}
		sseSend(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	h := start(t, viaOpenAI(up.URL+"/v1", nil))
	t.Cleanup(func() { close(quit) }) // before the server stops: a failed case must not hang it
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hi"}]}`, `"content":" second"`},
		{"/v1/responses", `{"model":"service","stream":true,"input":"hi"}`, `"delta":" second"`},
	} {
		got := make(chan error, 1)
		var res *http.Response
		var rd *bufio.Reader
		go func() { // the headers wait for the first write too
			res = h.do("POST", tc.path, tc.body)
			rd = bufio.NewReader(res.Body)
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					got <- err
					return
				}
				if strings.Contains(line, tc.want) {
					got <- nil
					return
				}
			}
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the content was held back while the upstream waited", tc.path)
		}
		seen <- struct{}{}
		io.Copy(io.Discard, rd)
		res.Body.Close()
	}
}
