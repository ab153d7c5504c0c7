package itemref

import (
	"context"
	"encoding/json"
	"unicode/utf8"

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

// outputKey carries a joined end's output text to the run's Transition.
type outputKey struct{}

// outputElision is the text of run runID's first output item.
type outputElision struct {
	runID string
	text  string
}

// MinOutput is the least output text kept by reference: a shorter one
// costs its row less than the read that would put it back.
const MinOutput = 64

// WithOutput returns ctx carrying the output items of run runID's
// response, written in the same transaction as the run's terminal
// Transition (a joined end, fenced by the same lease token): the
// Transition then keeps the run's output text as a reference to the
// first output item when that item holds exactly it (OutputElided).
func WithOutput(ctx context.Context, runID string, output []runner.Item) context.Context {
	for _, it := range output {
		if it.Output {
			return context.WithValue(ctx, outputKey{}, outputElision{runID, it.Message.Content})
		}
	}
	return ctx
}

// OutputElided reports whether run runID's output text may be kept as a
// reference to its response's first output item: ctx carries the joined
// end of that response (WithOutput), whose first output item's content is
// output byte for byte, valid UTF-8 (its stored JSON gives it back as
// is) and at least MinOutput bytes. The store still keeps the text when
// the response is deleted by the time the Transition runs: its output
// items are then not written.
func OutputElided(ctx context.Context, runID, output string) bool {
	e, ok := ctx.Value(outputKey{}).(outputElision)
	return ok && e.runID == runID && len(output) >= MinOutput && e.text == output && utf8.ValidString(output)
}

// OutputText is the output text of a run kept by reference
// (OutputElided): the content of its response's first output item, whose
// stored message is msg.
func OutputText(msg string) (string, error) {
	var m runner.Message
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		return "", err
	}
	return m.Content, nil
}
