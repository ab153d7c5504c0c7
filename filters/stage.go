// Package filters composes a request's handling from small stages, in the
// manner of CoreDNS's plugin.Handler and Caddy's middleware: a stage gets the
// exchange and the next handler, and either calls next or answers early.
//
// A chain is built once per configuration generation (see filters/builtin for
// the order) and shared by every request of that generation. Stages return
// errors (an *apierr.Error where the status matters); the edge renders them
// once, so no stage writes an error body itself.
package filters

import "context"

// Handler handles an exchange. The last stage's next is a no-op Handler, so
// next is never nil.
type Handler interface {
	Handle(ctx context.Context, x *Exchange) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, x *Exchange) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, x *Exchange) error { return f(ctx, x) }

// Stage is one step of a chain.
type Stage interface {
	// Name is the stage's name, e.g. "auth": the name of its span when
	// tracing is on (Traced) and of its runedge.stage attribute.
	Name() string
	Handle(ctx context.Context, x *Exchange, next Handler) error
}

// end terminates every chain.
var end = HandlerFunc(func(context.Context, *Exchange) error { return nil })

// Chain links stages front to back, building back to front, and ends the
// chain with terminal (or a no-op when terminal is nil).
func Chain(terminal Handler, stages ...Stage) Handler {
	h := terminal
	if h == nil {
		h = end
	}
	for i := len(stages) - 1; i >= 0; i-- {
		h = link{stage: stages[i], next: h}
	}
	return h
}

type link struct {
	stage Stage
	next  Handler
}

func (l link) Handle(ctx context.Context, x *Exchange) error {
	return l.stage.Handle(ctx, x, l.next)
}
