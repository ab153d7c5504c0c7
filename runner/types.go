// Package runner owns runs: the durable record of every request, the sessions
// and threads they belong to, the reference agent that executes them and the
// providers it calls.
//
// The runner knows nothing of HTTP. It reports outcomes as wrapped sentinel
// errors (ErrProvider, ErrTimeout, ErrCancelled, ...) that the filter chain maps
// to the OpenAI-compatible error table; callers test them with errors.Is.
package runner

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Status is the lifecycle state of a run.
//
//	queued → running → completed | failed | cancelled | waiting
//	waiting → running | cancelled | failed
type Status string

const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusWaiting   Status = "waiting"
)

// Terminal reports whether no further transition is possible.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Valid reports whether s is one of the known states.
func (s Status) Valid() bool {
	switch s {
	case StatusQueued, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled, StatusWaiting:
		return true
	}
	return false
}

// Status reasons recorded beside a terminal (or waiting) state.
const (
	ReasonClientDisconnect = "client_disconnect"
	ReasonShutdown         = "shutdown"
	ReasonInterrupted      = "interrupted"
	ReasonCancelRequested  = "cancel_requested"
	ReasonTimeout          = "timeout"
	ReasonProviderError    = "provider_error"
	ReasonRateLimited      = "rate_limit_exceeded"
	ReasonOutputInvalid    = "output_invalid"
	ReasonPluginError      = "plugin_error"
	ReasonApproval         = "approval_required"
	ReasonFailed           = "run_failed"
)

// Outcome errors. They are wrapped with detail (fmt.Errorf("%w: ...")) and
// tested with errors.Is.
var (
	// ErrNotFound: the run, session or thread does not exist or is not
	// visible to the caller's tenant (the two are indistinguishable on purpose).
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: the service is shutting down or at its in-flight limit.
	ErrUnavailable = errors.New("unavailable")
	// ErrProvider: the model provider failed.
	ErrProvider = errors.New("provider error")
	// ErrRateLimited: the provider refused the call for now (an upstream
	// 429). The error usually also carries RetryAfter() int; see
	// RateLimitError.
	ErrRateLimited = errors.New("rate limited")
	// ErrTimeout: the provider or the run exceeded its deadline.
	ErrTimeout = errors.New("timeout")
	// ErrCancelled: the run was cancelled (by the native API, by shutdown or
	// because its client went away); the run's status_reason says which.
	ErrCancelled = errors.New("run cancelled")
	// ErrShutdown wraps ErrCancelled when the cancel came from shutdown.
	ErrShutdown = fmt.Errorf("%w: shutting down", ErrCancelled)
	// ErrClientGone: the client went away (a write to it failed); passed to
	// Handle.Finish it records cancelled/client_disconnect.
	ErrClientGone = errors.New("client went away")
	// ErrWaiting: the run paused for approval or external input.
	ErrWaiting = errors.New("run waiting")
	// ErrOutputInvalid: the agent's structured output did not match the schema.
	ErrOutputInvalid = errors.New("output does not match the schema")
	// ErrInvalidRequest: the native request cannot be run (e.g. a malformed
	// output schema). Detected before the run is created.
	ErrInvalidRequest = errors.New("invalid request")
)

// Actor is who a run is attributed to.
type Actor struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
}

// Message is one input message of the native run request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Ref names a stored item (msg_…, fc_…) that stands for this message:
	// a mapping plugin passes the Responses API's item_reference through
	// as {"ref":"msg_…"}, and the service resolves it from the tenant's
	// stored items before the agent starts (ErrItemNotFound otherwise).
	// A resolved message never carries Ref.
	Ref string `json:"ref,omitempty"`
}

// Request is the native run request a mapping plugin produces from a
// compatible body. Its JSON form is part of the plugin ABI (plugins/ABI.md).
type Request struct {
	Input        []Message       `json:"input"`
	Instructions string          `json:"instructions,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	SchemaName   string          `json:"schema_name,omitempty"`
	// JSONObject asks for any JSON object (response_format json_object).
	JSONObject      bool `json:"json_object,omitempty"`
	Stream          bool `json:"stream"`
	MaxOutputTokens int  `json:"max_output_tokens,omitempty"`

	// The Responses API's stateful settings (DESIGN.md "Responses state").
	// PreviousResponseID continues that response: the run joins its
	// session and thread and the agent receives its turns first.
	PreviousResponseID string `json:"previous_response_id,omitempty"`
	// NoStore is store:false: the run is recorded without its input and
	// output, and the response cannot be retrieved or continued.
	NoStore bool `json:"no_store,omitempty"`
	// Background runs outlive the request that started them and are
	// cancelled only by an explicit cancel or shutdown.
	Background bool `json:"background,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// Result is what the agent produced.
type Result struct {
	Text string `json:"text"`
	// FinishReason is "stop" or "length".
	FinishReason string `json:"finish_reason"`
	Usage        Usage  `json:"usage"`
	// Attempts is how many times the agent asked the provider for this
	// answer: 1, or 2 when structured output needed a repair. The agent
	// sets it on failures too, so the run records what it cost.
	Attempts int `json:"attempts,omitempty"`
}

// Event is one streamed piece of the agent's answer.
type Event struct {
	Delta string
}

// ErrorInfo is the error recorded on a failed run.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Run is the durable record of one request. Its JSON form is the native API's
// run object.
type Run struct {
	ID            string     `json:"id"`
	Object        string     `json:"object"` // always "run"
	Status        Status     `json:"status"`
	StatusReason  string     `json:"status_reason"`
	SessionID     string     `json:"session_id"`
	ThreadID      string     `json:"thread_id"`
	Actor         Actor      `json:"actor"`
	TenantID      string     `json:"tenant_id"`
	Endpoint      string     `json:"endpoint"`
	Model         string     `json:"model"`
	RequestID     string     `json:"request_id,omitempty"`
	CorrelationID string     `json:"correlation_id,omitempty"`
	CreatedAt     int64      `json:"created_at"`
	StartedAt     *int64     `json:"started_at"`
	EndedAt       *int64     `json:"ended_at"`
	Usage         *Usage     `json:"usage"`
	Error         *ErrorInfo `json:"error"`
	// Attempts is how many provider calls the agent made for the answer
	// (Result.Attempts); 0 until the run ends, or when the agent never ran.
	Attempts int `json:"attempts"`
	// Request and Output are kept in the store but not part of the run object.
	Request json.RawMessage `json:"-"`
	Output  string          `json:"-"`
}
