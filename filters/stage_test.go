package filters_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
)

// step is a stage that logs its name on the way in and out, and answers
// early (with err) when stop is set.
type step struct {
	name string
	log  *[]string
	stop bool
	err  error
}

func (s step) Name() string { return s.name }

func (s step) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	*s.log = append(*s.log, s.name)
	if s.stop {
		return s.err
	}
	err := next.Handle(ctx, x)
	*s.log = append(*s.log, "/"+s.name)
	return err
}

// Stages run front to back, each around the rest, and the terminal last.
func TestChainOrder(t *testing.T) {
	var log []string
	term := filters.HandlerFunc(func(context.Context, *filters.Exchange) error {
		log = append(log, "terminal")
		return nil
	})
	h := filters.Chain(term, step{name: "a", log: &log}, step{name: "b", log: &log}, step{name: "c", log: &log})
	x, _ := filtertest.Exchange(filters.ChatCompletions, "{}")
	if err := h.Handle(t.Context(), x); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", "terminal", "/c", "/b", "/a"}; !slices.Equal(log, want) {
		t.Errorf("ran %q, want %q", log, want)
	}
}

// A stage that answers early stops the chain; its error comes back
// through the stages before it. A chain without a terminal ends in a no-op.
func TestChainStops(t *testing.T) {
	var log []string
	refused := apierr.InvalidBody("model", "model is required")
	next := &filtertest.Next{}
	h := filters.Chain(next, step{name: "a", log: &log}, step{name: "b", log: &log, stop: true, err: refused}, step{name: "c", log: &log})
	x, _ := filtertest.Exchange(filters.ChatCompletions, "{}")
	if err := h.Handle(t.Context(), x); err != refused {
		t.Fatalf("err %v, want the stage's", err)
	}
	if next.Called || !slices.Equal(log, []string{"a", "b", "/a"}) {
		t.Errorf("ran %q, terminal called %v", log, next.Called)
	}
	log = nil
	if err := filters.Chain(nil, step{name: "a", log: &log}).Handle(t.Context(), x); err != nil || !slices.Equal(log, []string{"a", "/a"}) {
		t.Errorf("nil terminal: %v %q", err, log)
	}
}

// Traced stages are sibling spans, each ending when it hands over to the
// next, except an enclosing one, which covers the rest of the chain; a
// stage that refuses marks its span with the error's code.
func TestTraced(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := tp.Tracer("test")
	var log []string
	h := filters.Chain(nil,
		filters.Traced(tr, step{name: "a", log: &log}, false),
		filters.Traced(tr, step{name: "run", log: &log}, true),
		filters.Traced(tr, step{name: "c", log: &log, stop: true, err: errors.New("boom")}, false))
	x, _ := filtertest.Exchange(filters.ChatCompletions, "{}")
	ctx, root := tr.Start(t.Context(), "request")
	if err := h.Handle(ctx, x); err == nil {
		t.Fatal("want the last stage's error")
	}
	root.End()
	ended := spans.Ended()
	var names []string
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		names = append(names, s.Name())
		byName[s.Name()] = s
	}
	// a ends at its hand-over; c ends when it returns; run encloses c.
	if want := []string{"a", "c", "run", "request"}; !slices.Equal(names, want) {
		t.Fatalf("spans ended %q, want %q", names, want)
	}
	a, run, c := byName["a"], byName["run"], byName["c"]
	for _, s := range []sdktrace.ReadOnlySpan{a, run, c} {
		if s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("span %s is not a child of the request's span", s.Name())
		}
	}
	if c.StartTime().Before(run.StartTime()) || c.EndTime().After(run.EndTime()) {
		t.Error("the enclosing span does not cover the stage after it")
	}
	if c.Status().Description != "internal_error" {
		t.Errorf("refusing stage's span status %+v", c.Status())
	}
	if a.Status().Description != "" {
		t.Errorf("a stage that handed over carries the later error: %+v", a.Status())
	}
}
