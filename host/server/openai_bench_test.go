package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/cputime"
)

// BenchmarkOpenAIProvider is the edge's added latency in front of an
// instant upstream: "direct" is a client calling the upstream itself,
// "via-edge" the same client calling runedge, whose openai provider calls
// that upstream (auth, plugins, SQLite run record, SSE re-framing on the
// way). ttft-ns/op is the time to the first content chunk, ns/op the whole
// reply; quote the edge as the difference between the pairs of one run.
func BenchmarkOpenAIProvider(b *testing.B) {
	up := instantUpstream(b)
	edge := start(b, viaOpenAI(up+"/v1", func(o *config.OpenAI) { o.IncludeUsage = true }))
	const msgs = `"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there runedge"}]}`
	for _, bc := range []struct {
		name, base, body string
		stream           bool
	}{
		{"direct", up, `{"model":"up-model","stream":true,"stream_options":{"include_usage":true},` + msgs, true},
		{"via-edge", edge.URL, `{"model":"service","stream":true,"stream_options":{"include_usage":true},` + msgs, true},
		{"direct-whole", up, `{"model":"up-model",` + msgs, false},
		{"via-edge-whole", edge.URL, `{"model":"service",` + msgs, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchFirstToken(b, bc.base+"/v1/chat/completions", bc.body, bc.stream)
		})
	}
}

// benchFirstToken sends the request b.N times over keep-alive connections
// and reports the mean time to the first content chunk of streams.
func benchFirstToken(b *testing.B, url, reqBody string, stream bool) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	var ttft time.Duration
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		req, _ := http.NewRequest("POST", url, strings.NewReader(reqBody))
		req.Header.Set("Authorization", "Bearer "+tokApp)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		if stream {
			rd := bufio.NewReader(res.Body)
			for {
				line, err := rd.ReadSlice('\n')
				if bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
					ttft += time.Since(t0)
					break
				}
				if err != nil {
					b.Fatalf("stream ended without content: %v", err)
				}
			}
			io.Copy(io.Discard, rd)
		} else {
			io.Copy(io.Discard, res.Body)
		}
		res.Body.Close()
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op") // server, client and upstream
	if stream {
		b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
	}
}

// instantUpstream is an OpenAI-compatible server that answers at once: a
// stream of eight content chunks (each flushed, as a model server does)
// with usage, or the same answer whole. It returns its base URL.
func instantUpstream(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"You", " said:", " Hello", " there", " runedge", ".", " Nice", " day."}
	whole := []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"up-model","choices":[{"index":0,"message":{"role":"assistant","content":"You said: Hello there runedge. Nice day."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, _ := io.ReadAll(r.Body)
		if !bytes.Contains(reqBody, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(whole)
			return
		}
		sseStart(w)
		sseSend(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		for _, word := range words {
			sseSend(w, contentChunk(word))
		}
		sseSend(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
			`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}`+"\n\n",
			"data: [DONE]\n\n")
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
