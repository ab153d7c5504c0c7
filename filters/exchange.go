package filters

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/runedge/runedge/runner"
)

// Endpoint names a compatible endpoint. The values are the ones recorded on
// runs and passed to mapping plugins.
type Endpoint string

const (
	Models          Endpoint = "models"
	ChatCompletions Endpoint = "chat.completions"
	Responses       Endpoint = "responses"
	// Native is the runner's own API (/runner/v1/...).
	Native Endpoint = "runner"
)

// Identity is who is calling, as established by the auth stage.
type Identity struct {
	// Token is the configured name of the bearer token used.
	Token string
	// TenantID is the tenant the caller acts as.
	TenantID string
	Actor    runner.Actor
	// Admin tokens see every tenant on the native API.
	Admin bool
}

// Exchange is the state of one request as it moves through the chain. Each
// stage fills in the fields it owns; later stages read them.
type Exchange struct {
	Endpoint Endpoint
	Request  *http.Request
	// Body is the request body, read in full (and size-limited) at the edge.
	Body []byte
	// Reply writes the answer; the edge renders errors through it.
	Reply *Reply

	// Set by auth.
	Identity Identity

	// Set by model.
	Stream       bool
	IncludeUsage bool

	// Set by map-request: the native run request, and the plugin's opaque
	// echo object handed back to the result mapping.
	Native runner.Request
	Echo   []byte

	// Set by conversation, for a Responses request that names one: the
	// conversation the run continues.
	Conversation *Conversation

	// Set by run.
	Run *runner.Handle
	// Finish, set by run, records the run's outcome (res and err as for
	// runner.Handle.Finish) and returns the error to render: nil when the
	// run completed, else the client's error, already mapped (an
	// *apierr.Error, or the *ClientGoneError that ended it). The run stage
	// is the only caller of Handle.Finish and the only place an outcome
	// becomes a client error; a later stage calls this when it must record
	// the end before its reply's last byte, and the run stage finishes what
	// nobody did. Calls after the first record nothing.
	Finish func(res *runner.Result, err error) error
	// Detached is set by translate when it handed a background run to a
	// goroutine of its own, which calls Finish; the run stage must not.
	Detached bool
	// Hold, set by the edge, keeps what the request uses (its
	// configuration generation: chains and plugins) alive past the reply,
	// for a background run; the returned func releases it. Nil: nothing to
	// hold.
	Hold func() (release func())
}

// Conversation is the conversation a request continues (the Responses
// API's conversation parameter): its items were put before the request's
// input, and once the run completes its new input and output items are
// appended to it.
type Conversation struct {
	// ID is the conversation's id (conv_…), SessionID the session it is.
	ID, SessionID string
	// Items are the conversation's items (OpenAI Responses items, oldest
	// first); the mapping stage maps them on their own into Messages, which
	// the agent receives before the input and which are not stored again
	// as the response's input.
	Items    []byte
	Messages []runner.Message
	// Append appends the request's input and the run's output items; the
	// run stage calls it when the run completed, before the reply's last
	// byte, so a client that reads the conversation next finds the turn.
	Append func(ctx context.Context, runID string, res *runner.Result) error
}

// ClientGoneError reports that writing to the client failed: it went away.
// There is nobody left to render an error for; the run is recorded as
// cancelled by client disconnect.
type ClientGoneError struct{ Err error }

func (e *ClientGoneError) Error() string { return "client went away: " + e.Err.Error() }

// Unwrap exposes both the write error and runner.ErrClientGone, so that the
// runner records the right reason: runner.ErrClientStalled when the write
// hit its deadline (the client stopped reading), else the client left.
func (e *ClientGoneError) Unwrap() []error {
	if errors.Is(e.Err, os.ErrDeadlineExceeded) {
		return []error{e.Err, runner.ErrClientStalled}
	}
	return []error{e.Err, runner.ErrClientGone}
}
