package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// scripted is an OpenAI-compatible upstream on 127.0.0.1 whose requests
// are answered by scripts in turn (the last one repeats). It keeps the
// request bodies.
type scripted struct {
	srv     *httptest.Server
	mu      sync.Mutex
	scripts []http.HandlerFunc
	bodies  []string
}

func newScripted(t testing.TB, scripts ...http.HandlerFunc) *scripted {
	t.Helper()
	s := &scripted{scripts: scripts}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(b))
		script := s.scripts[min(n, len(s.scripts)-1)]
		s.mu.Unlock()
		script(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// byMessage routes each request to the script named by its first
// message's content (which a repair attempt keeps), so one upstream, and
// one edge in front of it, serves many cases.
func byMessage(scripts map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		first := gjson.GetBytes(b, "messages.0.content").Str
		script, ok := scripts[first]
		if !ok {
			http.Error(w, "no script for "+first, http.StatusTeapot)
			return
		}
		script(w, r)
	}
}

// requestsFor are the bodies whose first message is content.
func (s *scripted) requestsFor(content string) []string {
	var out []string
	for _, b := range s.requests() {
		if gjson.Get(b, "messages.0.content").Str == content {
			out = append(out, b)
		}
	}
	return out
}

// isRepair reports whether r is the agent's repair attempt (the
// conversation plus the rejected answer and the complaint).
func isRepair(r *http.Request) bool {
	b, _ := io.ReadAll(r.Body)
	return len(gjson.GetBytes(b, "messages").Array()) > 1
}

func (s *scripted) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// sentFor posts reqBody to path on h, wants a 200, and returns the one
// request it made to the upstream.
func (s *scripted) sentFor(t *testing.T, h *harness, path, reqBody string) string {
	t.Helper()
	n := len(s.requests())
	res := h.do("POST", path, reqBody)
	if out := body(t, res); res.StatusCode != 200 {
		t.Fatalf("%d %.300s", res.StatusCode, out)
	}
	sent := s.requests()
	if len(sent) != n+1 {
		t.Fatalf("upstream got %d requests; want 1", len(sent)-n)
	}
	return sent[n]
}

// viaOpenAI configures the edge's provider to call baseURL, with short
// retry waits so failure tests stay quick.
func viaOpenAI(baseURL string, edit func(*config.OpenAI)) func(*config.Config) {
	return func(c *config.Config) {
		c.Provider.Kind = config.ProviderOpenAI
		o := &c.Provider.OpenAI
		o.BaseURL, o.Model = baseURL, "up-model"
		o.BackoffBase, o.BackoffMax = config.Dur(1e6), config.Dur(5e6) // 1ms, 5ms
		if edit != nil {
			edit(o)
		}
	}
}

func sseStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func sseSend(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		io.WriteString(w, e)
	}
	w.(http.Flusher).Flush()
}

func contentChunk(s string) string {
	b, _ := json.Marshal(s)
	return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
}

const stopChunk = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"

// streamOf answers a complete stream of contents.
func streamOf(contents ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sseStart(w)
		for _, c := range contents {
			sseSend(w, contentChunk(c))
		}
		sseSend(w, stopChunk)
	}
}

// wholeOf answers a whole chat.completion.
func wholeOf(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(content)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, b)
	}
}
