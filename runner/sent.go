package runner

import "context"

type sentKey struct{}

// WithSent returns ctx carrying sent, which Sent calls once a run's
// request has left for its model: the body stage gives back the bytes it
// admitted the request's body with (filters/body's Gate), so the bound on
// bytes in flight covers a request's processing, not the model's answer.
// sent must be safe to call more than once.
func WithSent(ctx context.Context, sent func()) context.Context {
	return context.WithValue(ctx, sentKey{}, sent)
}

// Sent reports that the run of ctx has handed its request on: a provider
// that calls an upstream calls it once its request has been written. By
// then the run has let go of its copies of the request's body (the
// recorded request, the exchange's native request, the agent's request);
// what it still holds is the provider's upstream body, kept for a retry.
// A provider that answers in the process (offline) does not call it: its
// answer is processing that holds the request's messages to its end, and
// the bytes go back when the request's chain returns. Without WithSent in
// ctx it does nothing.
func Sent(ctx context.Context) {
	if f := SentHook(ctx); f != nil {
		f()
	}
}

// SentHook is the function Sent calls for ctx, nil without one: for a
// provider that calls it from a hook of its own (an httptrace.ClientTrace)
// and sets none up when there is nothing to call.
func SentHook(ctx context.Context) func() {
	f, _ := ctx.Value(sentKey{}).(func())
	return f
}
