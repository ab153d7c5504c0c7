package runner

import (
	"context"
	"encoding/json"
)

// ProviderRequest is what the agent asks of a model provider: the whole
// conversation (instructions already turned into a leading system message)
// and the shape the answer must have.
type ProviderRequest struct {
	Messages []Message
	// OutputSchema, when set, is the JSON Schema the answer must satisfy.
	OutputSchema json.RawMessage
	SchemaName   string
	// JSONObject asks for any JSON object.
	JSONObject bool
	// Tools, ToolChoice and ParallelToolCalls are the client's function
	// tools and how the model may use them (Request's fields, as sent). A
	// provider that gets tools may answer with Result.ToolCalls and
	// FinishReason "tool_calls" instead of text.
	Tools             []Tool
	ToolChoice        ToolChoice
	ParallelToolCalls *bool
	// Upstream holds the client's settings for the upstream (reasoning
	// effort, prompt cache key, …), passed on unchanged where the upstream
	// takes them (Request.Upstream).
	Upstream Upstream
	// MaxOutputTokens caps the answer; 0 means the provider's default.
	MaxOutputTokens int
	// Stream says the client is reading the answer as it is produced; a
	// provider may then stream from its upstream too, and must call emit
	// as deltas arrive. Without it a provider may fetch the answer whole.
	Stream bool
	// Attempt numbers the agent's calls for one run: 1, then 2 for a
	// structured-output repair, whose Messages end with the rejected
	// answer and the validation error. Providers may ignore it.
	Attempt int
}

// Provider is a model backend (offline, or an OpenAI-compatible upstream).
type Provider interface {
	// Name identifies the provider in logs and errors.
	Name() string
	// Generate produces the answer, calling emit with each text delta
	// (Event.Delta) and each tool-call fragment (Event.ToolCall) as it is
	// produced; emit returns an error when the consumer is gone (stop
	// then). The result holds the whole answer: Text, and ToolCalls when
	// the model called tools. Failures wrap ErrProvider (or ErrTimeout, ErrRateLimited,
	// ErrWaiting); a cancelled ctx ends the call promptly with the
	// context's error.
	Generate(ctx context.Context, req ProviderRequest, emit func(Event) error) (Result, error)
}

// Agent executes one run request. The service owns the run record; the
// agent only produces the answer, streaming it through emit.
type Agent interface {
	Run(ctx context.Context, req Request, emit func(Event) error) (Result, error)
}

// InlineAgent is implemented by an agent that can say, per request, that
// its run makes no call that waits (no network, no validation a schema
// can pin) and returns as soon as its context ends. The service then runs
// a run its owner waits for whole (not streamed, not in the background) on
// the owner's goroutine, when the owner first waits for it (Events, Wait
// or Finish), instead of handing it to a worker: at one connection each
// hand-off woke an idle thread, twice per request (RATIONALE.md "The
// agent on the request's goroutine").
type InlineAgent interface {
	Agent
	Inline(req Request) bool
}

// PreparedRun is the rest of a run that an agent or a provider prepared
// before the run's start was committed (PreparingAgent,
// PreparingProvider): called once, like Agent.Run with the request it was
// prepared from, which it no longer reads.
type PreparedRun func(ctx context.Context, emit func(Event) error) (Result, error)

// Run implements Agent: r, whatever the request.
func (r PreparedRun) Run(ctx context.Context, _ Request, emit func(Event) error) (Result, error) {
	return r(ctx, emit)
}

// PreparingAgent is implemented by an agent that can do the work that
// reads a request's input before the run's row is committed: the run
// then waits for its start to commit holding what that work made (the
// reference agent over an HTTP upstream: the upstream request, which
// points at the client's texts) rather than the input it was made from
// (an agent-sized history's decoded texts and message array, some 320 KB;
// RATIONALE.md "Bytes in flight"). Prepare reports false when it has
// nothing to prepare for req; the service then calls Run as before.
type PreparingAgent interface {
	Agent
	Prepare(req Request) (PreparedRun, bool)
}

// PreparingProvider is implemented by a provider that can write its
// upstream request before the call (PreparingAgent): the PreparedRun it
// returns is Generate of req, req no longer read.
type PreparingProvider interface {
	Provider
	Prepare(req ProviderRequest) (PreparedRun, bool)
}

// InProcessProvider is implemented by a provider that answers in the
// process (the offline one): no network call, nothing that outlives its
// context. The reference agent runs such a provider's plain requests
// inline (InlineAgent).
type InProcessProvider interface {
	Provider
	InProcess() bool
}
