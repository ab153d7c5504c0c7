package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/cputime"
)

// The whole request path per endpoint: real HTTP on 127.0.0.1 (keep-alive),
// auth, the wasm mapping plugins, a real SQLite file, the offline agent.
// BenchmarkBaselineHTTP is the same client against a handler that does
// nothing: quote the endpoints as ratios to it, measured in the same run.
func BenchmarkEndpoint(b *testing.B) {
	h := start(b, nil)
	for _, bc := range []struct{ name, method, path, body string }{
		{"models", "GET", "/v1/models", ""},
		{"chat", "POST", "/v1/chat/completions", chatBody},
		{"chat-stream", "POST", "/v1/chat/completions", `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`},
		{"responses", "POST", "/v1/responses", `{"model":"service","input":"Hello there runedge"}`},
		// store defaults to true: the response, its items and its final
		// object are kept; store:false keeps only the run row.
		{"responses-store-false", "POST", "/v1/responses", `{"model":"service","input":"Hello there runedge","store":false}`},
		{"responses-stream", "POST", "/v1/responses", `{"model":"service","input":"Hello there runedge","stream":true}`},
		{"responses-schema", "POST", "/v1/responses", `{"model":"service","input":"Ada","text":{"format":{"type":"json_schema","name":"p","strict":true,"schema":{"type":"object","additionalProperties":false,"required":["name","born"],"properties":{"name":{"type":"string"},"born":{"type":"integer"}}}}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchRequests(b, h.URL, bc.method, bc.path, bc.body)
		})
	}
}

// baselineBody is GET /v1/models's reply: the do-nothing server answers
// what the cheapest endpoint answers.
var baselineBody = []byte(`{"object":"list","data":[{"id":"service","object":"model","created":1735689600,"owned_by":"runedge"}]}`)

func BenchmarkBaselineHTTP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(baselineBody)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	benchRequests(b, "http://"+ln.Addr().String(), "POST", "/", chatBody)
}

// benchRequests reports cpu-ns/op too, the process's CPU time per request
// (server and client): on a shared machine it varies less than ns/op,
// which counts the time the process waited for a core.
func benchRequests(b *testing.B, base, method, path, reqBody string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	lat := make([]time.Duration, 0, 4096)
	cpu0 := cputime.Process()
	for b.Loop() {
		t0 := time.Now()
		if err := benchDo(client, method, base+path, reqBody); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	reportLatency(b, lat)
}

// reportLatency reports the median and the 99th percentile of one
// connection's sequential requests (p50-ns, p99-ns), the figures
// bench-edge's "1 conn" scenario checks, here without an upstream.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) < 100 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
}

// benchDo sends one request of the benchmarks with the app token, reads
// the whole reply and returns an error unless it is a 200. It does not
// fail the benchmark itself, so RunParallel's goroutines can use it.
func benchDo(client *http.Client, method, url, body string) error {
	return benchDoReader(client, method, url, strings.NewReader(body))
}

// benchDoReader is benchDo with the body from a reader.
func benchDoReader(client *http.Client, method, url string, body io.Reader) error {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tokApp)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", method, url, res.StatusCode)
	}
	return nil
}

// BenchmarkStoredResponseConcurrent is store:true against store:false with
// 16 clients at once, where group commit can share a transaction among
// concurrent writes: the stored response's extra writes (its record and
// input items at the start, final object and output item at the end) are
// worth what they add per request here, not in the sequential benchmark.
// cpu-ns/op is the process's CPU time per request (server and clients).
func BenchmarkStoredResponseConcurrent(b *testing.B) {
	h := start(b, nil)
	for _, bc := range []struct{ name, body string }{
		{"store-true", `{"model":"service","input":"Hello there runedge"}`},
		{"store-false", `{"model":"service","input":"Hello there runedge","store":false}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			defer client.CloseIdleConnections()
			b.SetParallelism(8) // 16 clients on 2 cores
			cpu0 := cputime.Process()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := benchDo(client, "POST", h.URL+"/v1/responses", bc.body); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
