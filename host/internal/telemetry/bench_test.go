package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/runner"
)

// chatBody is a small chat request, as the host's benchmarks send it.
const chatBody = `{"model":"service","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there runedge"}]}`

// The instrumentation one request adds, in isolation: the request counter
// and duration histogram, the run's outcome, TTFT, time-per-token and
// token histograms, two store write timings. Whole requests are too noisy
// on a shared machine to resolve a difference this small; this is the
// precise figure to hold against BenchmarkEndpoint's CPU per request.
func BenchmarkInstrumentationPerRequest(b *testing.B) {
	m := NewMetrics(false)
	in, out, ms := 5, 9, int64(3)
	r := &runner.Run{Endpoint: "chat.completions", Status: runner.StatusCompleted, TenantID: "acme",
		Usage: &runner.Usage{InputTokens: in, OutputTokens: out}, DurationMs: &ms, TimeToFirstTokenMs: &ms,
		Elapsed: 3 * time.Millisecond, FirstToken: time.Millisecond}
	ts := &timedStore{m: m}
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		m.Request(httproute.LabelChat, "POST", 200, "acme", time.Since(start))
		m.RunFinished(r)
		ts.observe(m.storeStart, start)
		ts.observe(m.storeFinish, start)
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
		new  func() (*Tracing, error)
	}{
		{"spans", func() (*Tracing, error) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
			return &Tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}, nil
		}},
		{"otlp-http", func() (*Tracing, error) {
			// WithBlocking: a loop this fast would fill the queue and the
			// processor would drop spans, measuring less than the export.
			exp, err := newExporter(context.Background(), config.Tracing{Endpoint: rcv.Listener.Addr().String(), Insecure: true})
			if err != nil {
				return nil, err
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking()),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
			return &Tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}, nil
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
			cpu0 := cputime.Process()
			for b.Loop() {
				handler(w, req)
			}
			tr.Shutdown(context.Background()) // the last batch is paid for too
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// tracedRequest is what tracing adds to one chat request, without the
// request: its spans and attributes around stages, a provider call and
// store writes that do nothing.
func tracedRequest(tr *Tracing) func(http.ResponseWriter, *http.Request) {
	var stages []filters.Stage
	for _, n := range builtin.Order {
		stages = append(stages, filters.Traced(tr.tracer, passStage(n), n == "run"))
	}
	st, _ := TraceStore(nopStore{}, nil, tr.tracer, "sqlite")
	pv := TraceProvider(nopProvider{}, tr.tracer, "openai", "up-model")
	chain := filters.Chain(filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
		r := &runner.Run{ID: "run_1"}
		st.StartRun(ctx, r, true, true)
		pv.Generate(ctx, runner.ProviderRequest{Stream: true, Attempt: 1}, nil)
		st.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted})
		return nil
	}), stages...)
	return func(w http.ResponseWriter, req *http.Request) {
		r, span := tr.StartRequest(w, req)
		x := &filters.Exchange{Endpoint: filters.ChatCompletions, Request: r, Body: []byte(chatBody)}
		x.Identity.TenantID = "acme"
		err := chain.Handle(r.Context(), x)
		Annotate(r.Context(), x, err)
		EndRequest(span, r, 200)
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
