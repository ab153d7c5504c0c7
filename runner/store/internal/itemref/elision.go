package itemref

import (
	"context"

	"github.com/runedge/runedge/runner"
)

// elisionKey carries a joined first write's input to the run's StartRun.
type elisionKey struct{}

// elision is the input of run runID's response, stored as its items.
type elision struct {
	runID string
	msgs  []string
}

// WithElision returns ctx carrying the input of run runID's response
// (msgs, the stored messages of its input items), written in the same
// transaction as the run: the run's StartRun then records its request
// without that input (Elided).
func WithElision(ctx context.Context, runID string, msgs []string) context.Context {
	return context.WithValue(ctx, elisionKey{}, elision{runID, msgs})
}

// Elided is the recorded request r keeps: without its input when ctx
// carries the joined write of its response's input items (WithElision)
// and the request holds exactly them; otherwise r.Request.
func Elided(ctx context.Context, r *runner.Run) []byte {
	if e, ok := ctx.Value(elisionKey{}).(elision); ok && e.runID == r.ID {
		if b, ok := Elide(r.Request, e.msgs); ok {
			return b
		}
	}
	return r.Request
}
