package openai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/openai"
)

// upstream is a scripted OpenAI-compatible server on 127.0.0.1. Each
// request is answered by the next script (the last one repeats), and the
// request bodies are kept for inspection.
type upstream struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	scripts []http.HandlerFunc
	bodies  []map[string]any
	headers []http.Header
}

func newUpstream(t *testing.T, scripts ...http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{t: t, scripts: scripts}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, "request body is not JSON", http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		n := len(u.bodies)
		u.bodies = append(u.bodies, body)
		u.headers = append(u.headers, r.Header.Clone())
		script := u.scripts[min(n, len(u.scripts)-1)]
		u.mu.Unlock()
		script(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) URL() string { return u.srv.URL + "/v1" }

// requests is how many requests arrived.
func (u *upstream) requests() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

func (u *upstream) body(i int) map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[i]
}

func (u *upstream) header(i int) http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.headers[i]
}

// provider returns a provider for u with short limits, changed by edit.
func (u *upstream) provider(edit func(*openai.Config)) *openai.Provider {
	u.t.Helper()
	return newProvider(u.t, u.URL(), edit)
}

func newProvider(t *testing.T, baseURL string, edit func(*openai.Config)) *openai.Provider {
	t.Helper()
	cfg := openai.Config{BaseURL: baseURL, Model: "up-model", APIKey: "sk-test-secret-key-123456",
		FirstByteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
		MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// chunk is one chat.completion.chunk event carrying content.
func chunk(content string) string {
	b, _ := json.Marshal(content)
	return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
}

const (
	roleChunk   = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	finishChunk = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usageChunk  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\n"
	doneEvent   = "data: [DONE]\n\n"
)

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// send writes events and flushes them.
func send(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		io.WriteString(w, e)
	}
	w.(http.Flusher).Flush()
}

// streams answers a complete stream of the given contents.
func streams(contents ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, roleChunk)
		for _, c := range contents {
			send(w, chunk(c))
		}
		send(w, finishChunk, usageChunk, doneEvent)
	}
}

// answers answers a whole chat.completion with content.
func answers(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(content)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"up-model","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`, b)
	}
}

// fails answers status with an OpenAI error body and extra headers.
func fails(status int, message string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		b, _ := json.Marshal(message)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"x","param":null,"code":null}}`, b)
	}
}

func ask(text string, stream bool) runner.ProviderRequest {
	return runner.ProviderRequest{Messages: []runner.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: text}}, Stream: stream, Attempt: 1}
}

// generate runs one call and collects its deltas.
func generate(t *testing.T, p *openai.Provider, req runner.ProviderRequest) ([]string, runner.Result, error) {
	t.Helper()
	var deltas []string
	res, err := p.Generate(t.Context(), req, func(ev runner.Event) error {
		d := ev.Delta
		deltas = append(deltas, d)
		return nil
	})
	return deltas, res, err
}

func wantNoKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error()+detail(err), "secret-key") {
		t.Fatalf("error leaks the API key: %v", err)
	}
}

// detail is what the failure told the log only ("" for none).
func detail(err error) string {
	var de *runner.DetailError
	if errors.As(err, &de) {
		return de.Detail
	}
	return ""
}

// wantDetail checks that the upstream's words are in the log's detail and
// not in the error's text (the client's and the run record's).
func wantDetail(t *testing.T, err error, said string) {
	t.Helper()
	if !strings.Contains(detail(err), said) || strings.Contains(err.Error(), said) {
		t.Fatalf("err %q, detail %q: want %q in the detail only", err, detail(err), said)
	}
}

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}
