package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// BenchmarkStream20 is bench-edge's stream scenario in one process: streams
// of 20 content chunks and a usage chunk, 32 at a time (chat-1conn: one at
// a time, where nothing batches the store's commits), through the
// whole server (auth, the native default mapping, a SQLite file, the
// openai provider), from a mock upstream on a real socket. "direct" is
// the same client calling the upstream itself: the edge's own cost per
// stream is the difference of the two cpu-ns/op of one run (the process's
// CPU: client, server and upstream). The upstream writes the stream in one
// piece, as bench-edge's mock does ("burst": its chunks reach the edge
// together), or flushes each chunk, as a model does ("paced"). "proxy" is
// bench-edge's baseline in the same process: a do-nothing
// httputil.ReverseProxy in front of the burst upstream, so
// (chat − direct) / (proxy − direct) is bench-edge's "CPU per stream"
// ratio from one run.
func BenchmarkStream20(b *testing.B) {
	burst := stream20Upstream(b, false)
	paced := stream20Upstream(b, true)
	chat := `{"model":"service","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	direct := `{"model":"mock-model","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	var writes atomic.Int64 // the edges' writes to their clients
	edgeBurst, edgePaced := countingEdge(b, burst, &writes), countingEdge(b, paced, &writes)
	proxy := stream20Proxy(b, burst)
	for _, bc := range []struct {
		name, url, body string
		conns           int
	}{
		{"direct", burst + "/v1/chat/completions", direct, 32},
		{"proxy", proxy + "/v1/chat/completions", direct, 32},
		{"chat", edgeBurst.URL + "/v1/chat/completions", chat, 32},
		{"chat-paced", edgePaced.URL + "/v1/chat/completions", chat, 32},
		{"responses", edgeBurst.URL + "/v1/responses", `{"model":"service","stream":true,"input":"hello"}`, 32},
		{"chat-1conn", edgeBurst.URL + "/v1/chat/completions", chat, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: bc.conns}}
			defer client.CloseIdleConnections()
			b.ReportAllocs()
			cpu0, w0 := cputime.Process(), writes.Load()
			if bc.conns == 1 {
				for b.Loop() {
					if err := benchDo(client, "POST", bc.url, bc.body); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((bc.conns + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := benchDo(client, "POST", bc.url, bc.body); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(writes.Load()-w0)/float64(b.N), "writes/op")
		})
	}
}

// countingEdge starts runedge with the openai provider on the upstream at
// base (app token only), counting its writes to its clients in writes.
func countingEdge(tb testing.TB, base string, writes *atomic.Int64) *harness {
	tb.Helper()
	cfg := configtest.New(tb)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	viaOpenAI(base+"/v1", nil)(cfg)
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	return serveListener(tb, cfg, testWriter{tb}, func(ln net.Listener) net.Listener {
		return countingListener{ln, writes}
	})
}

// stream20Upstream serves mockupstream.Stream20 to any POST and returns its base
// URL; paced flushes after every event.
func stream20Upstream(b testing.TB, paced bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	events := bytes.SplitAfter(mockupstream.Stream20, []byte("\n\n"))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !paced {
			w.Write(mockupstream.Stream20)
			return
		}
		f := w.(http.Flusher)
		for _, e := range events {
			w.Write(e)
			f.Flush()
		}
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// stream20Proxy starts bench-edge's baseline in front of the upstream at
// base (bench/edge's proxyHandler) and returns its URL.
func stream20Proxy(tb testing.TB, base string) string {
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	p.Transport = tr
	srv := httptest.NewServer(p)
	tb.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	return srv.URL
}
