package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/runner"
)

// tracedProvider makes each provider call a client span named as the GenAI
// semantic conventions name inference spans ("chat {model}"), a child of
// the run stage's span (the run's context derives from it). The openai
// provider sends this span's context upstream as traceparent.
type tracedProvider struct {
	runner.Provider
	tracer trace.Tracer
	name   string
	system attribute.KeyValue
	model  attribute.KeyValue
}

// TraceProvider wraps p when tracer is set. system is the
// gen_ai.provider.name; model the upstream model asked for.
func TraceProvider(p runner.Provider, tracer trace.Tracer, system, model string) runner.Provider {
	if tracer == nil {
		return p
	}
	return &tracedProvider{Provider: p, tracer: tracer, name: "chat " + model,
		system: attribute.String("gen_ai.provider.name", system),
		model:  attribute.String("gen_ai.request.model", model)}
}

// InProcess implements runner.InProcessProvider when the traced provider
// does: a span adds no call that waits.
func (t *tracedProvider) InProcess() bool {
	p, ok := t.Provider.(runner.InProcessProvider)
	return ok && p.InProcess()
}

// TakesPendingTexts implements runner.PendingTextProvider when the traced
// provider does: a span reads no text.
func (t *tracedProvider) TakesPendingTexts() bool {
	p, ok := t.Provider.(runner.PendingTextProvider)
	return ok && p.TakesPendingTexts()
}

func (t *tracedProvider) Generate(ctx context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	return t.traced(ctx, req.Stream, req.Attempt, req.MaxOutputTokens, func(ctx context.Context) (runner.Result, error) {
		return t.Provider.Generate(ctx, req, emit)
	})
}

// Prepare implements runner.PreparingProvider when the traced provider
// does: the call the prepared run makes is the span.
func (t *tracedProvider) Prepare(req runner.ProviderRequest) (runner.PreparedRun, bool) {
	p, ok := t.Provider.(runner.PreparingProvider)
	if !ok {
		return nil, false
	}
	gen, ok := p.Prepare(req)
	if !ok {
		return nil, false
	}
	stream, attempt, maxTokens := req.Stream, req.Attempt, req.MaxOutputTokens
	return func(ctx context.Context, emit func(runner.Event) error) (runner.Result, error) {
		return t.traced(ctx, stream, attempt, maxTokens, func(ctx context.Context) (runner.Result, error) {
			return gen(ctx, emit)
		})
	}, true
}

// traced makes call in a span of its own.
func (t *tracedProvider) traced(ctx context.Context, stream bool, attempt, maxTokens int, call func(context.Context) (runner.Result, error)) (runner.Result, error) {
	start := make([]attribute.KeyValue, 0, 6)
	start = append(start, t.system, t.model, chatOperation,
		attribute.Bool("runedge.provider.stream", stream),
		attribute.Int("runedge.provider.attempt", attempt))
	if maxTokens > 0 { // 0: the provider's default, not a request
		start = append(start, attribute.Int("gen_ai.request.max_tokens", maxTokens))
	}
	ctx, span := t.tracer.Start(ctx, t.name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(start...))
	defer span.End()
	res, err := call(ctx)
	// One SetAttributes: each call may grow the span's attribute slice.
	attrs := make([]attribute.KeyValue, 2, 4)
	attrs[0] = attribute.Int("gen_ai.usage.input_tokens", res.Usage.InputTokens)
	attrs[1] = attribute.Int("gen_ai.usage.output_tokens", res.Usage.OutputTokens)
	if res.FinishReason != "" {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{res.FinishReason}))
	}
	if err != nil {
		kind := errorType(err)
		attrs = append(attrs, attribute.String("error.type", kind))
		span.RecordError(err)
		span.SetStatus(codes.Error, kind)
	}
	span.SetAttributes(attrs...)
	return res, err
}

var chatOperation = attribute.String("gen_ai.operation.name", "chat")

// errorType names a provider failure by its runner sentinel.
func errorType(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{runner.ErrRateLimited, "rate_limited"},
		{runner.ErrTimeout, "timeout"},
		{runner.ErrCancelled, "cancelled"},
		{runner.ErrClientGone, "cancelled"},
		{runner.ErrProvider, "provider_error"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return "_OTHER"
}
