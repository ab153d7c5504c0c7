package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// BenchmarkAgentTurn is bench-edge's agent-sized scenario in one process:
// a chat completion carrying a 400-message history (mockupstream.AgentChat,
// about 230 KB), or the same history as a Responses input of 400 items,
// through the whole edge (auth, the native default mapping, a SQLite file,
// the openai provider) and through a do-nothing httputil.ReverseProxy, both
// in front of the same mock upstream (mockupstream.Handler) on real
// sockets. "direct" is the same client calling the upstream itself.
// chat-32conns-postgres is chat-32conns with the edge's store on
// PostgreSQL (RUNEDGE_TEST_PG_DSN): the server's own CPU is not in
// edge-ns/req; db-ns/req is its CPU per edge request (pgtest.ServerCPU),
// bench-edge's "db CPU".
//
// Each op is one block of requests per target in turn (direct, proxy,
// edge), with the process's CPU (getrusage) read around each block, so the
// three see the same machine. The process holds client, upstream and
// target, so a target's own CPU is its block's less direct's:
// proxy-ns/req and edge-ns/req are those, and edge/proxy is their ratio,
// the figure the performance contract holds to 3×.
func BenchmarkAgentTurn(b *testing.B) {
	up := serveHandler(b, mockupstream.Handler())
	u, _ := url.Parse(up)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 256}
	proxy := serveHandler(b, rp)
	edge := start(b, viaOpenAI(up+"/v1", nil))
	for _, bc := range []struct {
		name       string
		path       string
		edge, bare []byte // the body to the edge; to the proxy and upstream
		conns      int
		postgres   bool
	}{
		{"chat", "/v1/chat/completions", mockupstream.AgentChat("service", false), mockupstream.AgentChat("mock-model", false), 1, false},
		{"chat-stream", "/v1/chat/completions", mockupstream.AgentChat("service", true), mockupstream.AgentChat("mock-model", true), 1, false},
		{"chat-32conns", "/v1/chat/completions", mockupstream.AgentChat("service", false), mockupstream.AgentChat("mock-model", false), 32, false},
		{"chat-32conns-postgres", "/v1/chat/completions", mockupstream.AgentChat("service", false), mockupstream.AgentChat("mock-model", false), 32, true},
		// The proxy forwards the same history as a chat completion: what a
		// Responses request becomes upstream.
		{"responses", "/v1/responses", mockupstream.AgentInput("service", false), mockupstream.AgentChat("mock-model", false), 1, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			edge := edge
			db := func() time.Duration { return 0 }
			if bc.postgres {
				dsn := pgtest.Schema(b)
				db = pgtest.ServerCPU(b, dsn)
				edge = start(b, func(c *config.Config) {
					viaOpenAI(up+"/v1", nil)(c)
					c.Store.Driver, c.Store.DSN = "postgres", dsn
				})
			}
			per := 8 // requests per connection per block
			if bc.conns > 1 {
				per = 2
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: bc.conns, DisableCompression: true}}
			defer client.CloseIdleConnections()
			chat := "/v1/chat/completions"
			var direct, viaProxy, viaEdge, viaDB time.Duration
			b.ReportAllocs()
			for b.Loop() {
				direct += cpuBlock(b, client, up+chat, bc.bare, bc.conns, per)
				viaProxy += cpuBlock(b, client, proxy+chat, bc.bare, bc.conns, per)
				db0 := db()
				viaEdge += cpuBlock(b, client, edge.URL+bc.path, bc.edge, bc.conns, per)
				viaDB += db() - db0
			}
			n := float64(b.N * bc.conns * per)
			d, p, e := float64(direct)/n, float64(viaProxy)/n, float64(viaEdge)/n
			b.ReportMetric(d, "direct-ns/req")
			b.ReportMetric(p-d, "proxy-ns/req")
			b.ReportMetric(e-d, "edge-ns/req")
			if p > d {
				b.ReportMetric((e-d)/(p-d), "edge/proxy")
			}
			b.ReportMetric(float64(len(bc.edge)), "body-B")
			if bc.postgres {
				b.ReportMetric(float64(viaDB)/n, "db-ns/req")
			}
		})
	}
}

// cpuBlock sends body to url per times on each of conns connections at
// once and returns the process's CPU over the block.
func cpuBlock(b *testing.B, client *http.Client, url string, body []byte, conns, per int) time.Duration {
	cpu0 := cputime.Process()
	if conns == 1 {
		for range per {
			if err := benchPostBytes(client, url, body); err != nil {
				b.Fatal(err)
			}
		}
		return cputime.Process() - cpu0
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Go(func() {
			for range per {
				if err := benchPostBytes(client, url, body); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	cpu := cputime.Process() - cpu0
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return cpu
}

// benchPostBytes is benchDo for a body in bytes.
func benchPostBytes(client *http.Client, url string, body []byte) error {
	return benchDoReader(client, "POST", url, bytes.NewReader(body))
}

// serveHandler serves h on 127.0.0.1 and returns its base URL.
func serveHandler(b testing.TB, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// BenchmarkSmallTurn is bench-edge's `make run` rows in one process: the
// one-line chat request through the edge as `make run` serves it (the
// offline provider, SQLite, the native default) and through a bare Go
// handler answering the same ~640-byte chat.completion
// (mockupstream.Handler), in alternated blocks, at one connection and at
// 32. bare-ns/req and edge-ns/req are the process's CPU per request over
// each one's blocks, the client included in both (bench-edge counts the
// server alone, so its ratio is larger); edge/bare is their ratio. The
// edge logs as `runedge serve` does, an access line a request into a
// LogOutput (over io.Discard).
func BenchmarkSmallTurn(b *testing.B) {
	bare := serveHandler(b, mockupstream.Handler())
	logOut := telemetry.NewLogOutput(io.Discard, telemetry.AccessFlushInterval, telemetry.AccessBufferBytes)
	defer logOut.Close()
	edge := serveLogger(b, startConfig(b, nil), slog.New(logOut.TextHandler()), nil)
	body := []byte(`{"model":"service","messages":[{"role":"user","content":"hello"}]}`)
	for _, conns := range []int{1, 32} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			per := 50
			if conns > 1 {
				per = 4
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true}}
			defer client.CloseIdleConnections()
			var viaBare, viaEdge time.Duration
			b.ReportAllocs()
			for b.Loop() {
				viaBare += cpuBlock(b, client, bare+"/v1/chat/completions", body, conns, per)
				viaEdge += cpuBlock(b, client, edge.URL+"/v1/chat/completions", body, conns, per)
			}
			n := float64(b.N * conns * per)
			b.ReportMetric(float64(viaBare)/n, "bare-ns/req")
			b.ReportMetric(float64(viaEdge)/n, "edge-ns/req")
			b.ReportMetric(float64(viaEdge)/float64(viaBare), "edge/bare")
		})
	}
}
