package filters

import (
	"errors"
	"net/http"
	"os"

	"github.com/runedge/runedge/filters/turn"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Endpoint names a compatible endpoint. The values are the ones recorded on
// runs and passed to mapping plugins (internal/contract).
type Endpoint string

const (
	Models          Endpoint = contract.EndpointModels
	ChatCompletions Endpoint = contract.EndpointChat
	Responses       Endpoint = contract.EndpointResponses
	// ResponsesCompact is recorded on compaction runs (POST
	// /v1/responses/compact); their requests are mapped as Responses
	// requests, so the compaction stage sets it after the mapping.
	ResponsesCompact Endpoint = contract.EndpointCompact
	// Native is the runner's own API (/runner/v1/...).
	Native Endpoint = contract.EndpointNative
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
	members      members // SetMembers, Member

	// Set by map-request: the native run request, and the plugin's opaque
	// echo object handed back to the result mapping.
	Native runner.Request
	Echo   []byte
	// SessionID and ThreadID, set by a request stage whose body names
	// them (the native run request), are the session and thread the run
	// continues; the run stage reads them as it reads the
	// x-service-session-id and x-service-thread-id headers.
	SessionID, ThreadID string

	// Turn is a Responses turn's state (filters/turn): the conversation
	// it continues, the compaction it carries, the context its agent is
	// given, the connection that remembers it. Set by the first stage
	// that needs it (conversation, compaction) or by the host (a socket
	// turn); nil for a request that has none.
	Turn *turn.Turn

	// Set by run.
	Run *runner.Handle
	// End, set by run with Run, owns the run's end: recording it exactly
	// once (End.Finish) and handing it to a background goroutine
	// (End.Detach).
	End *End
}

// Settle waits for the agent and records the run's end (End.Finish) with its
// result: what a stage that answers after the agent returned calls. The
// error is the agent's (for the run stage to record) or Finish's answer.
func (x *Exchange) Settle() (runner.Result, error) {
	res, err := x.Run.Wait()
	if err != nil {
		return res, err
	}
	return res, x.End.Finish(&res, nil)
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

// TurnOf is x's turn, made when x has none yet.
func (x *Exchange) TurnOf() *turn.Turn {
	if x.Turn == nil {
		x.Turn = &turn.Turn{}
	}
	return x.Turn
}
