package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/openai"
)

// BenchmarkGenerate is the provider's own cost per call against an instant
// upstream on 127.0.0.1: "raw" reads the same stream with a bare HTTP
// client and no parsing, "provider" is Generate. The difference is what the
// provider adds (request encoding, SSE and chunk parsing, watchdogs); the
// whole edge's share is host/server's BenchmarkOpenAIProvider.
func BenchmarkGenerate(b *testing.B) {
	u := &upstream{scripts: []http.HandlerFunc{streams("You", " said:", " Hello", " there", " runedge", ".", " Nice", " day.")}}
	srv := newBenchServer(b, u)
	p, err := openai.New(openai.Config{BaseURL: srv + "/v1", Model: "m", IncludeUsage: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	req := ask("Hello there runedge", true)

	b.Run("raw", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		defer client.CloseIdleConnections()
		body := `{"model":"m","messages":[{"role":"user","content":"Hello there runedge"}],"stream":true}`
		var ttft time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			res, err := client.Post(srv+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			rd := bufio.NewReader(res.Body)
			for {
				line, err := rd.ReadSlice('\n')
				if bytes.Contains(line, []byte(`"content":"You"`)) {
					ttft += time.Since(t0)
					break
				}
				if err != nil {
					b.Fatal("no content")
				}
			}
			io.Copy(io.Discard, rd)
			res.Body.Close()
		}
		b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
	})
	b.Run("provider", func(b *testing.B) {
		var ttft time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			first := true
			_, err := p.Generate(context.Background(), req, func(runner.Event) error {
				if first {
					ttft += time.Since(t0)
					first = false
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
	})
}

// newBenchServer serves u's first script on 127.0.0.1 without the test
// bookkeeping of newUpstream.
func newBenchServer(b *testing.B, u *upstream) string {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.scripts[0](w, r)
	})}
	ln := listen(b)
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
