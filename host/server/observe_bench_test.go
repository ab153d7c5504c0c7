package server

import (
	"net"
	"net/http"
	"testing"

	"github.com/runedge/runedge/internal/cputime"
)

// What metrics cost per whole request: the same server answering through
// its instrumented handler (metrics on: request counter and histogram,
// access log check, run outcome, TTFT and token histograms, store write
// timing) and through the bare router with run and store observations
// switched off (metrics off), alternately, in one run; CPU time of the
// process (server and client) per request. README quotes the ratio.
func BenchmarkObservability(b *testing.B) {
	h := start(b, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{Handler: h.srv.routes()}
	go bare.Serve(ln)
	defer bare.Close()
	bareURL := "http://" + ln.Addr().String()
	for _, bc := range []struct{ name, body string }{
		{"chat", chatBody},
		{"chat-stream", `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`},
	} {
		for range 2 {
			b.Run(bc.name+"/metrics-off", func(b *testing.B) {
				h.srv.metrics.SetOff(true)
				defer h.srv.metrics.SetOff(false)
				cpu0 := cputime.Process()
				benchRequests(b, bareURL, "POST", "/v1/chat/completions", bc.body)
				b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
			b.Run(bc.name+"/metrics-on", func(b *testing.B) {
				cpu0 := cputime.Process()
				benchRequests(b, h.URL, "POST", "/v1/chat/completions", bc.body)
				b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
