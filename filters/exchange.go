package filters

import (
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

	// Set by run.
	Run *runner.Handle
	// End, set by run with Run, owns the run's end: recording it exactly
	// once (End.Finish) and handing it to a background goroutine
	// (End.Detach).
	End *End
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
