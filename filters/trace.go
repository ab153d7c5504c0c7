package filters

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters/apierr"
)

// Traced wraps a stage so that each request through it is a span named for
// the stage, a child of the request's span. Stages call next from inside
// their Handle, so a span kept open until Handle returns would nest every
// later stage inside the earlier ones; instead the span ends when the stage
// hands the exchange to next, and next runs in the request's span again:
// the stages are siblings, each showing its own time. A stage whose work
// encloses the rest of the chain (enclosing: the run stage, whose run lives
// until the reply is written) keeps its span open until it returns, and
// what it starts (the run's provider call and store writes) is its child.
//
// A chain built without tracing has no wrapper at all: tracing off costs
// nothing per stage.
func Traced(tracer trace.Tracer, st Stage, enclosing bool) Stage {
	return &traced{Stage: st, tracer: tracer, enclosing: enclosing}
}

type traced struct {
	Stage
	tracer    trace.Tracer
	enclosing bool
}

func (t *traced) Handle(ctx context.Context, x *Exchange, next Handler) error {
	parent := trace.SpanFromContext(ctx)
	// No attributes: the span's name is the stage's, and every attribute
	// is an allocation per request.
	sctx, span := t.tracer.Start(ctx, t.Name())
	h := &handoff{next: next, parent: parent, span: span, end: !t.enclosing}
	err := t.Stage.Handle(sctx, x, h)
	h.mu.Lock()
	own := !h.handed // the stage answered (or failed) without next
	h.mu.Unlock()
	if err != nil && (own || t.enclosing) {
		e := apierr.From(err)
		span.SetAttributes(attribute.String("error.type", e.Code))
		span.SetStatus(codes.Error, e.Code)
	}
	if own || t.enclosing {
		span.End()
	}
	return err
}

// handoff is the next handler as a traced stage sees it: it ends the
// stage's span (unless the stage encloses the rest) and runs next in the
// parent span.
type handoff struct {
	next   Handler
	parent trace.Span
	span   trace.Span
	end    bool

	mu     sync.Mutex
	handed bool
}

func (h *handoff) Handle(ctx context.Context, x *Exchange) error {
	h.mu.Lock()
	first := !h.handed
	h.handed = true
	h.mu.Unlock()
	if first && h.end {
		h.span.End()
	}
	return h.next.Handle(trace.ContextWithSpan(ctx, h.parent), x)
}
