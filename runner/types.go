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
	"time"

	"github.com/runedge/runedge/runner/native"
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
	// ReasonToolCalls: the run completed with tool calls for the client
	// to run (its output is the calls).
	ReasonToolCalls = "tool_calls"
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
	// ErrClientStalled wraps ErrClientGone when the client was cut off
	// because it stopped reading (a write deadline passed): recorded
	// cancelled/client_stalled.
	ErrClientStalled = fmt.Errorf("%w: stopped reading", ErrClientGone)
	// ErrWaiting: the run paused for approval or external input.
	ErrWaiting = errors.New("run waiting")
	// ErrNotRecorded: Handle.Finish could not write the run's outcome (the
	// store failed). It takes precedence over the outcome it wraps: the
	// run is left as the store last had it, and its end is in the log.
	ErrNotRecorded = errors.New("run outcome not recorded")
	// ErrOutputInvalid: the agent's structured output did not match the schema.
	ErrOutputInvalid = errors.New("output does not match the schema")
	// ErrInvalidRequest: the native request cannot be run (e.g. a malformed
	// output schema). Detected before the run is created.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrInvalidSchema: the output schema compiles but is beyond the limits
	// (size, depth, the size of the smallest document it allows) or admits
	// no value. It matches ErrInvalidRequest too.
	ErrInvalidSchema = fmt.Errorf("%w: invalid output schema", ErrInvalidRequest)
	// ErrDuplicateItem: an item appended to a conversation has an id the
	// conversation already holds. Callers check ids before they append;
	// this is what a store answers when two writes race past that check
	// (its unique index), so the loser is told why, not a 500. The error
	// is a *DuplicateItemError, which names the id.
	ErrDuplicateItem = errors.New("duplicate item id")
	// ErrSessionExists: StartRun was told to open a new session whose id
	// has runs already (two first runs of one conversation at once; or an
	// id another run chose).
	ErrSessionExists = errors.New("session exists already")
)

// DuplicateItemError is a store's ErrDuplicateItem for item ID.
type DuplicateItemError struct{ ID string }

func (e *DuplicateItemError) Error() string        { return "duplicate item id " + e.ID }
func (e *DuplicateItemError) Is(target error) bool { return target == ErrDuplicateItem }

// Tool types live in runner/native (see there).
type (
	Tool          = native.Tool
	ToolCall      = native.ToolCall
	ToolCallDelta = native.ToolCallDelta
	ToolChoice    = native.ToolChoice
)

// Tool choice modes (native.ToolChoice).
const (
	ToolChoiceAuto     = native.ToolChoiceAuto
	ToolChoiceNone     = native.ToolChoiceNone
	ToolChoiceRequired = native.ToolChoiceRequired
	ToolChoiceFunction = native.ToolChoiceFunction
)

// Actor is who a run is attributed to.
type Actor struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
}

// The native wire types live in the leaf package runner/native so that code
// on both sides of the plugin boundary can share them; these aliases keep the
// runner's names.
type (
	// Message is one input message of the native run request.
	Message = native.Message
	// Request is the native run request a mapping plugin produces from a
	// compatible body. Its JSON form is part of the plugin ABI (plugins/ABI.md).
	Request = native.Request
	// Usage counts tokens.
	Usage = native.Usage
	// Result is what the agent produced.
	Result = native.Result
	// Upstream is what a provider passes on to its upstream.
	Upstream = native.Upstream
	// Part is a content part of a message beyond text (images, files,
	// audio); Reasoning a replayed or produced reasoning item.
	Part      = native.Part
	Reasoning = native.Reasoning
)

// Part kinds and the reasoning role (runner/native parts.go).
const (
	PartText      = native.PartText
	PartImage     = native.PartImage
	PartFile      = native.PartFile
	PartAudio     = native.PartAudio
	RoleReasoning = native.RoleReasoning
)

// Event is one streamed piece of the agent's answer.
// It carries either a text delta or a tool-call fragment; an event with
// neither carries nothing to stream (a consumer holding events back on
// More writes them then).
type Event struct {
	Delta    string         `json:"delta,omitempty"`
	ToolCall *ToolCallDelta `json:"tool_call,omitempty"`
	// More says that the next event has already arrived and follows at
	// once: a consumer may hold its write until an event without More.
	// A producer that sets it sends an event without it before it waits.
	More bool `json:"-"`
}

// ErrorInfo is the error recorded on a failed run.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Run is the durable record of one request. Its JSON form is the native API's
// run object.
type Run struct {
	ID            string `json:"id"`
	Object        string `json:"object"` // always "run"
	Status        Status `json:"status"`
	StatusReason  string `json:"status_reason"`
	SessionID     string `json:"session_id"`
	ThreadID      string `json:"thread_id"`
	Actor         Actor  `json:"actor"`
	TenantID      string `json:"tenant_id"`
	Endpoint      string `json:"endpoint"`
	Model         string `json:"model"`
	RequestID     string `json:"request_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	// HostID is the runedge host that runs (or ran) it (host.id).
	HostID string `json:"host_id"`
	// TraceID is the OpenTelemetry trace id of the request that made the
	// run (32 hex digits; the reply's X-Service-Trace-Id), "" when
	// tracing was off.
	TraceID   string     `json:"trace_id,omitempty"`
	CreatedAt int64      `json:"created_at"`
	StartedAt *int64     `json:"started_at"`
	EndedAt   *int64     `json:"ended_at"`
	Usage     *Usage     `json:"usage"`
	Error     *ErrorInfo `json:"error"`
	// Attempts is how many provider calls the agent made for the answer
	// (Result.Attempts); 0 until the run ends, or when the agent never ran.
	Attempts int `json:"attempts"`
	// DurationMs is the run's wall time in milliseconds, from admission to
	// the recorded outcome (the Unix-second times above cannot show a
	// sub-second run). Null until the run ends, and for runs that ended
	// without this process timing them (interrupted, cancelled while
	// waiting).
	DurationMs *int64 `json:"duration_ms"`
	// TimeToFirstTokenMs is the time from admission to the agent's first
	// text delta, in milliseconds. Null when no delta was produced (a
	// failure before any text, or a provider that answered whole).
	TimeToFirstTokenMs *int64 `json:"time_to_first_token_ms"`
	// Elapsed and FirstToken are the same timings at full resolution, set
	// only on the copy an Observer receives (metrics want sub-millisecond
	// values); FirstToken is 0 when no delta was produced.
	Elapsed    time.Duration `json:"-"`
	FirstToken time.Duration `json:"-"`
	// ToolCalls are the calls a run that ended in tool calls (status
	// completed, reason tool_calls) asked the client to make: its output.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Request and Output are kept in the store but not part of the run
	// object. Output is the answer's text or, for a run that ended in tool
	// calls, the JSON array of its calls (see ToolCalls).
	Request json.RawMessage `json:"-"`
	Output  string          `json:"-"`
	// RequestBounds, set by Start on a recorded request of at least
	// SharedRequestMin bytes whose input a stored response does not keep,
	// are the offsets in Request just past each input message: Request[:b]
	// is `{"input":[` and the messages up to that one, the same bytes in
	// every request that begins with them (the service writes them). A
	// store may keep the request by reference to an earlier run's of the
	// tenant that begins with such a prefix (RATIONALE.md "Agent-sized
	// bodies"). Not stored, not read back.
	RequestBounds []int `json:"-"`
	// LeaseToken and LeaseExpiresAt are the run's lease (lease.go): the
	// fencing token of its holder's latest acquisition (1 at the start,
	// one more at every takeover, so it also counts the run's drives) and
	// when the lease runs out, in Unix milliseconds (0: held by nobody,
	// as a run that waits or ended, or one written before leases).
	// StartRun records them with the run; GetRun and ListRuns read the
	// token (the operator page shows it as the run's drives), not the
	// expiry.
	LeaseToken     int64 `json:"-"`
	LeaseExpiresAt int64 `json:"-"`
	// LeaseFor, when positive, is how long a new run's first lease holds
	// counted from its start's write: StartRun writes the expiry as the
	// host's clock when the store executes the start (inside its
	// transaction, as the run's row is inserted) plus LeaseFor, in place
	// of LeaseExpiresAt, and sets LeaseExpiresAt to it. A start that
	// waited in the store's queue, or whose preparation was slow, then
	// never commits a lease that has already run out, which any host's
	// takeover would find at once (RATIONALE.md "Leases and fencing").
	// Not stored, not read back.
	LeaseFor time.Duration `json:"-"`
}
