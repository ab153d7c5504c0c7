package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
// runedge's). CPU time of the whole process per request; README and
// RATIONALE quote the ratios.
func BenchmarkRequestTracing(b *testing.B) {
	var exported atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		exported.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer rcv.Close()
	off := start(b, nil)
	on := start(b, func(c *config.Config) {
		c.Tracing = config.Tracing{Endpoint: rcv.Listener.Addr().String(), Insecure: true}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{Handler: off.srv.routes()}
	go bare.Serve(ln)
	defer bare.Close()
	bareURL := "http://" + ln.Addr().String()
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
			b.Run(bc.name+"/tracing-on", func(b *testing.B) { measure(b, on.URL, bc.body) })
		}
	}
	// Flush, so the exports the runs above queued are paid for (and seen).
	on.shutdown()
	if exported.Load() == 0 {
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
// write spans, through the real SDK and batch span processor to an
// exporter that drops them. Whole requests are noisy on a shared machine;
// this is the precise figure to hold against a request's CPU time.
func BenchmarkTracingPerRequest(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
	defer tp.Shutdown(context.Background())
	tr := &tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}
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
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody))
	req.Pattern = "/v1/chat/completions"
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
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
