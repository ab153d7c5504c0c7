package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/cputime"
)

// What tracing costs per whole request, in one run, alternated:
// metrics-off is the bare router with run and store observations off (the
// cost before any observability); tracing-off is the server as it ships
// (metrics on, no tracing endpoint: no spans); tracing-on is a second
// server tracing every request (sample_ratio 1) through the real batch
// span processor and OTLP/HTTP exporter, to a receiver on 127.0.0.1 that
// reads and discards the batches (decoding them is a collector's cost, not
// runedge's). CPU time of the whole process per request; RATIONALE.md
// quotes the ratios.
func BenchmarkRequestTracing(b *testing.B) {
	var exported atomic.Int64
	ranOn := false
	off, on, bareURL := tracingServers(b, &exported)
	measure := func(b *testing.B, url, body string) {
		cpu0 := cputime.Process()
		benchRequests(b, url, "POST", "/v1/chat/completions", body)
		b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	for _, bc := range []struct{ name, body string }{
		{"chat", chatBody},
		{"chat-stream", `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`},
	} {
		// Rounds alternate the three, so drift on a shared machine hits
		// each alike: run with -count 1 and take each one's median.
		for range 3 {
			b.Run(bc.name+"/metrics-off", func(b *testing.B) {
				off.srv.metrics.SetOff(true)
				defer off.srv.metrics.SetOff(false)
				measure(b, bareURL, bc.body)
			})
			b.Run(bc.name+"/tracing-off", func(b *testing.B) { measure(b, off.URL, bc.body) })
			b.Run(bc.name+"/tracing-on", func(b *testing.B) { ranOn = true; measure(b, on.URL, bc.body) })
		}
	}
	// Flush, so the exports the runs above queued are paid for (and seen;
	// -bench may have selected no tracing-on run).
	on.shutdown()
	if ranOn && exported.Load() == 0 {
		b.Fatal("the tracing server exported nothing")
	}
}

// The same three variants as BenchmarkRequestTracing, compared round by
// round: each iteration is one round of 150 requests per variant and
// endpoint, back to back in a rotating order, and the ratios of each round
// are kept; the reported figures are their medians, in percent
// (tracing-off against metrics-off, tracing-on against tracing-off).
// Ratios of neighbouring segments resist the drift of a shared machine
// better than one long run per variant. Run with -benchtime 15x.
func BenchmarkRequestTracingRatio(b *testing.B) {
	off, on, bareURL := tracingServers(b, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	const perSegment = 150
	// segment sends perSegment requests; flush, for the tracing server,
	// exports the segment's spans before the clock stops, so that their
	// export is paid in this segment and not in whichever comes next.
	segment := func(url, body string, flush func(context.Context) error) float64 {
		cpu0 := cputime.Process()
		for range perSegment {
			if err := benchDo(client, "POST", url+"/v1/chat/completions", body); err != nil {
				b.Fatal(err)
			}
		}
		if flush != nil {
			if err := flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		return float64(cputime.Process() - cpu0)
	}
	type ratios struct{ offBare, onOff []float64 }
	eps := []struct{ name, body string }{
		{"chat", chatBody},
		{"chat-stream", `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`},
	}
	got := make([]ratios, len(eps))
	round := 0
	for b.Loop() {
		for i, ep := range eps {
			var cpu [3]float64 // metrics-off, tracing-off, tracing-on
			for k := range 3 {
				switch v := (k + round) % 3; v {
				case 0:
					off.srv.metrics.SetOff(true)
					cpu[0] = segment(bareURL, ep.body, nil)
					off.srv.metrics.SetOff(false)
				case 1:
					cpu[1] = segment(off.URL, ep.body, nil)
				case 2:
					cpu[2] = segment(on.URL, ep.body, on.srv.tracing.ForceFlush)
				}
			}
			got[i].offBare = append(got[i].offBare, 100*(cpu[1]/cpu[0]-1))
			got[i].onOff = append(got[i].onOff, 100*(cpu[2]/cpu[1]-1))
		}
		round++
	}
	for i, ep := range eps {
		b.ReportMetric(median(got[i].offBare), ep.name+"-tracing-off-vs-metrics-off-%")
		b.ReportMetric(median(got[i].onOff), ep.name+"-tracing-on-vs-off-%")
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// warm sends 300 chat requests, streamed and not, to each server.
func warm(b *testing.B, urls ...string) {
	b.Helper()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	for _, u := range urls {
		for i := range 300 {
			body := chatBody
			if i%2 == 1 {
				body = `{"model":"service","stream":true,"messages":[{"role":"user","content":"warm"}]}`
			}
			if err := benchDo(client, "POST", u+"/v1/chat/completions", body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// tracingServers starts the three variants the tracing benchmarks compare,
// warmed alike: off (tracing off, metrics on), on (tracing to an OTLP/HTTP
// receiver on 127.0.0.1 that counts into exported when it is not nil and
// discards the bytes) and, at bareURL, off's router without the server's
// observation wrapper (metrics-off). All stop when b ends.
func tracingServers(b *testing.B, exported *atomic.Int64) (off, on *harness, bareURL string) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if exported != nil {
			exported.Add(n)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(rcv.Close)
	off = start(b, nil)
	on = start(b, func(c *config.Config) {
		c.Tracing = config.Tracing{Endpoint: rcv.Listener.Addr().String(), Insecure: true}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{Handler: off.srv.routes()}
	go bare.Serve(ln)
	b.Cleanup(func() { bare.Close() })
	// Warm both servers alike (plugin instance pools, connections, the
	// exporter's first batches): a cold server would lose its first round.
	warm(b, off.URL, on.URL)
	return off, on, "http://" + ln.Addr().String()
}
