package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
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
		cpu0 := cpuTime()
		benchRequests(b, url, "POST", "/v1/chat/completions", body)
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	for _, bc := range []struct{ name, body string }{
		{"chat", chatBody},
		{"chat-stream", `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`},
	} {
		// Rounds alternate the three, so drift on a shared machine hits
		// each alike: run with -count 1 and take each one's median.
		for range 3 {
			b.Run(bc.name+"/metrics-off", func(b *testing.B) {
				off.srv.metrics.off.Store(true)
				defer off.srv.metrics.off.Store(false)
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

// discardExporter drops spans: the batch span processor's work is
// measured, not a collector's.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// passStage is a stage that only calls next.
type passStage string

func (s passStage) Name() string { return string(s) }
func (passStage) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	return next.Handle(ctx, x)
}

// The spans one chat request makes, in isolation: the root span (with the
// traceparent extraction, the header and the attributes annotate sets),
// six stage spans through filters.Traced, the provider span and two store
// write spans, through the real SDK and batch span processor. "spans"
// hands them to an exporter that drops them (the request path's share);
// "otlp-http" exports them for real, OTLP/HTTP protobuf to a receiver on
// 127.0.0.1 that discards the bytes. cpu-ns/op is the process's CPU time
// per request, the exporter's goroutine included. Whole requests are
// noisy on a shared machine; this is the precise figure to hold against a
// request's CPU time (BenchmarkRequestTracing, BenchmarkEndpoint).
func BenchmarkTracingPerRequest(b *testing.B) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer rcv.Close()
	for _, bc := range []struct {
		name string
		new  func() (*tracing, error)
	}{
		{"spans", func() (*tracing, error) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
			return &tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}, nil
		}},
		{"otlp-http", func() (*tracing, error) {
			// WithBlocking: a loop this fast would fill the queue and the
			// processor would drop spans, measuring less than the export.
			exp, err := newExporter(context.Background(), config.Tracing{Endpoint: rcv.Listener.Addr().String(), Insecure: true})
			if err != nil {
				return nil, err
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking()),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
			return &tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}, nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr, err := bc.new()
			if err != nil {
				b.Fatal(err)
			}
			handler := tracedRequest(tr)
			req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody))
			req.Pattern = "/v1/chat/completions"
			w := httptest.NewRecorder()
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				handler(w, req)
			}
			tr.shutdown(context.Background()) // the last batch is paid for too
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// tracedRequest is what tracing adds to one chat request, without the
// request: its spans and attributes around stages, a provider call and
// store writes that do nothing.
func tracedRequest(tr *tracing) func(http.ResponseWriter, *http.Request) {
	var stages []filters.Stage
	for _, n := range builtin.Order {
		stages = append(stages, filters.Traced(tr.tracer, passStage(n), n == "run"))
	}
	st, _ := traceStore(nopStore{}, nil, tr.tracer, "sqlite")
	pv := traceProvider(nopProvider{}, tr.tracer, "openai", "up-model")
	chain := filters.Chain(filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
		r := &runner.Run{ID: "run_1"}
		st.StartRun(ctx, r, true, true)
		pv.Generate(ctx, runner.ProviderRequest{Stream: true, Attempt: 1}, nil)
		st.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted})
		return nil
	}), stages...)
	return func(w http.ResponseWriter, req *http.Request) {
		r, span := tr.startRequest(w, req)
		x := &filters.Exchange{Endpoint: filters.ChatCompletions, Request: r, Body: []byte(chatBody)}
		x.Identity.TenantID = "acme"
		err := chain.Handle(r.Context(), x)
		annotate(r.Context(), x, err)
		endRequest(span, r, 200)
	}
}

type nopStore struct{ runner.Store }

func (nopStore) StartRun(context.Context, *runner.Run, bool, bool) error     { return nil }
func (nopStore) Transition(context.Context, string, runner.Transition) error { return nil }

type nopProvider struct{}

func (nopProvider) Name() string { return "nop" }
func (nopProvider) Generate(context.Context, runner.ProviderRequest, func(runner.Event) error) (runner.Result, error) {
	return runner.Result{FinishReason: "stop", Usage: runner.Usage{InputTokens: 5, OutputTokens: 9}}, nil
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
		cpu0 := cpuTime()
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
		return float64(cpuTime() - cpu0)
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
					off.srv.metrics.off.Store(true)
					cpu[0] = segment(bareURL, ep.body, nil)
					off.srv.metrics.off.Store(false)
				case 1:
					cpu[1] = segment(off.URL, ep.body, nil)
				case 2:
					cpu[2] = segment(on.URL, ep.body, on.srv.tracing.tp.ForceFlush)
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
