package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"strings"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/contract"
)

// HeaderTraceID carries the request's trace id on every reply while
// tracing is on, so that a client can find its request in the tracing
// backend (the run records the same id as trace_id).
const HeaderTraceID = "X-Service-Trace-Id"

// tracerName is the instrumentation scope of runedge's spans.
const tracerName = "github.com/runedge/runedge"

// Tracing is the server's OpenTelemetry trace pipeline: a tracer provider
// with a batch span processor in front of an OTLP exporter. It exists only
// when tracing.endpoint is set; a server without it starts no spans and
// records no attributes (the request path checks its *Tracing for nil, so the
// off path costs one comparison). It belongs to the server, not to a
// generation: a reload does not change where traces go.
type Tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	// prop reads and writes W3C traceparent/tracestate.
	prop propagation.TextMapPropagator
}

// NewTracing builds the pipeline of tc, or returns nil when tracing is off.
// Nothing is dialled here: the exporter connects on its first export, so
// a collector that is down costs dropped spans, never a failed start.
func NewTracing(ctx context.Context, tc config.Tracing, hostID string, log *slog.Logger) (*Tracing, error) {
	if !tc.Enabled() {
		return nil, nil
	}
	// The SDK reports failed exports (a collector that is down) to
	// OpenTelemetry's one process-wide error handler, which otherwise
	// prints them with the standard library's logger; route them to the
	// process log instead, at warning level (the last server started in a
	// process owns it).
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: exporting spans failed", "endpoint", tc.Endpoint, "err", err)
	}))
	exp, err := newExporter(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// The SDK's own reading of OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES overrides runedge's defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "runedge"),
			attribute.String("service.instance.id", hostID)),
		resource.WithFromEnv())
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: what parsed is kept.
		log.Warn("tracing: resource attributes from the environment", "err", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(tc.Batch())),
		sdktrace.WithSampler(samplerOf(tc)),
		sdktrace.WithResource(res),
	)
	return &Tracing{tp: tp, tracer: tp.Tracer(tracerName), prop: propagation.TraceContext{}}, nil
}

func newExporter(ctx context.Context, tc config.Tracing) (*otlptrace.Exporter, error) {
	url := strings.Contains(tc.Endpoint, "://")
	if tc.Protocol == config.TracingGRPC {
		var opts []otlptracegrpc.Option
		switch {
		case tc.FromEnv: // the SDK reads OTEL_EXPORTER_OTLP_* itself
		case url:
			opts = append(opts, otlptracegrpc.WithEndpointURL(tc.Endpoint))
		default:
			opts = append(opts, otlptracegrpc.WithEndpoint(tc.Endpoint))
		}
		if tc.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	switch {
	case tc.FromEnv:
	case url:
		opts = append(opts, otlptracehttp.WithEndpointURL(tc.Endpoint))
		if u, err := neturl.Parse(tc.Endpoint); err == nil && (u.Path == "" || u.Path == "/") {
			// A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: the SDK would
			// post to it as it is.
			opts = append(opts, otlptracehttp.WithURLPath("/v1/traces"))
		}
	default:
		opts = append(opts, otlptracehttp.WithEndpoint(tc.Endpoint))
	}
	if tc.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return otlptracehttp.New(ctx, opts...)
}

// Tracer is the tracer of t, nil when tracing is off.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// Shutdown flushes the spans still queued and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// ForceFlush exports the spans queued so far (benchmarks pay for an
// export where they measure it).
func (t *Tracing) ForceFlush(ctx context.Context) error { return t.tp.ForceFlush(ctx) }

// StartRequest continues the caller's trace (traceparent) or starts one,
// opens the request's root span and names the trace in the reply's
// X-Service-Trace-Id header. The span is renamed once the route is known
// (EndRequest).
func (t *Tracing) StartRequest(w http.ResponseWriter, r *http.Request) (*http.Request, trace.Span) {
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
		))
	if sc := span.SpanContext(); sc.IsSampled() {
		// Only a trace that is exported can be looked up.
		w.Header().Set(HeaderTraceID, sc.TraceID().String())
	}
	return r.WithContext(ctx), span
}

// EndRequest names the root span for its route ("POST /v1/chat/completions")
// and ends it with the status written.
func EndRequest(span trace.Span, r *http.Request, status int) {
	if r.Pattern != "" && r.Pattern != "/" {
		span.SetName(r.Method + " " + r.Pattern)
		span.SetAttributes(attribute.String("http.route", r.Pattern))
	}
	// A failure's Error status was set by Annotate, with its code.
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	span.End()
}

// Annotate records on the request's root span what the chain learnt: who
// called, the run it made and, for a run that ended with the request, its
// usage and finish reason (GenAI semantic conventions); and a failure's
// error code, as an Error status.
func Annotate(ctx context.Context, x *filters.Exchange, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 12)
	if x.Identity.TenantID != "" {
		attrs = append(attrs, attribute.String("service.tenant_id", x.Identity.TenantID))
	}
	if x.Identity.Actor.ID != "" {
		attrs = append(attrs, attribute.String("service.actor_id", x.Identity.Actor.ID))
	}
	if op := operationOf(x.Endpoint); op != "" {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", op))
	}
	if m := gjson.GetBytes(x.Body, "model"); m.Type == gjson.String {
		attrs = append(attrs, attribute.String("gen_ai.request.model", m.Str))
	} else if x.Body == nil && x.Run != nil && x.Endpoint != filters.Native {
		// The run stage let go of the body; the model stage had let through
		// only this model.
		attrs = append(attrs, attribute.String("gen_ai.request.model", contract.ModelID))
	}
	if h := x.Run; h != nil {
		r := h.Run()
		attrs = append(attrs,
			attribute.String("service.run_id", r.ID),
			attribute.String("service.session_id", r.SessionID),
			attribute.String("service.thread_id", r.ThreadID),
			attribute.String("gen_ai.response.model", r.Model),
		)
		if !x.End.Detached() {
			// The run ended with the request: the agent has returned.
			res, _ := h.Wait()
			attrs = append(attrs,
				attribute.Int("gen_ai.usage.input_tokens", res.Usage.InputTokens),
				attribute.Int("gen_ai.usage.output_tokens", res.Usage.OutputTokens))
			if res.FinishReason != "" {
				attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{res.FinishReason}))
			}
		}
	}
	span.SetAttributes(attrs...)
	if err != nil {
		failed(span, err)
	}
}

// failed marks span as failed with the error's OpenAI error code (the one
// the client sees) as its description and error.type.
func failed(span trace.Span, err error) {
	e := apierr.From(err)
	code := e.Code
	if code == "" {
		code = e.Type
	}
	span.SetAttributes(attribute.String("error.type", code))
	span.SetStatus(codes.Error, code)
}

// operationOf is the GenAI operation of an endpoint: both generation
// endpoints are chat (the conventions name no separate operation for the
// Responses API).
func operationOf(ep filters.Endpoint) string {
	switch ep {
	case filters.ChatCompletions, filters.Responses:
		return "chat"
	}
	return ""
}
