package filters

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"sync"

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

	// Set by map-request: the native run request, and the plugin's opaque
	// echo object handed back to the result mapping.
	Native runner.Request
	Echo   []byte
	// SessionID and ThreadID, set by a request stage whose body names
	// them (the native run request), are the session and thread the run
	// continues; the run stage reads them as it reads the
	// x-service-session-id and x-service-thread-id headers.
	SessionID, ThreadID string

	// Set by conversation, for a Responses request that names one: the
	// conversation the run continues.
	Conversation *Conversation

	// Set by compaction, for a Responses turn that compacts or may
	// (context_management, compaction_trigger): Context, when not nil, is
	// what the agent is given in place of the resolved history and input
	// (the request is recorded as sent; the run does not resolve the
	// history again); Compacted is the compaction item the Response's
	// output carries.
	Context   []runner.Message
	Compacted *Compacted

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

// Conversation is the conversation a request continues (the Responses
// API's conversation parameter): its items go before the request's input,
// and once the run completes its new input and the items of the Response
// the client got are appended to it.
//
// Its items are read and mapped only when the run (or the compaction that
// precedes it) asks, inside an admission slot (Messages): reading a
// conversation costs what it holds, so a request refused for want of a
// slot reads none of it.
type Conversation struct {
	// ID is the conversation's id (conv_…), SessionID the session it is.
	ID, SessionID string
	// Read reads the conversation's items (OpenAI Responses items, oldest
	// first) within the history bound; set by the conversation stage.
	Read func(ctx context.Context) ([]json.RawMessage, error)
	// Map maps items on their own into the native messages the agent
	// receives before the input (not stored again as the response's
	// input); set by the map-request stage.
	Map func(ctx context.Context, items []json.RawMessage) ([]runner.Message, error)
	// Open, when set, rewrites the mapped messages (the compaction stage
	// opens the conversation's compaction items).
	Open func([]runner.Message) ([]runner.Message, error)
	// Append appends the request's input and the items of the Response
	// the client got (object: the final Response, after the result
	// plugin); the run stage calls it when the run completed, before the
	// reply's last byte, so a client that reads the conversation next
	// finds the turn. nil: the run adds nothing (a compaction of the
	// conversation).
	Append func(ctx context.Context, runID string, object []byte) error

	once     sync.Once
	messages []runner.Message
	err      error
}

// Messages reads, maps and opens the conversation's items, once: the
// caller holds an admission slot (runner.StartSpec.LoadHistory, the
// compaction stage's runner.Service.Input).
func (c *Conversation) Messages(ctx context.Context) ([]runner.Message, error) {
	c.once.Do(func() {
		if c.Read == nil {
			return
		}
		var items []json.RawMessage
		if items, c.err = c.Read(ctx); c.err != nil || len(items) == 0 {
			return
		}
		if c.Map == nil {
			c.err = errors.New("filters: a conversation's items were read but no stage maps them")
			return
		}
		if c.messages, c.err = c.Map(ctx, items); c.err == nil && c.Open != nil {
			c.messages, c.err = c.Open(c.messages)
		}
	})
	return c.messages, c.err
}

// Compacted is the compaction a Responses turn carries in its output
// (filters/compaction): the item goes first in the Response's output, and
// first in its stream.
type Compacted struct {
	// Item is the compaction item (JSON), sealed by a compaction run that
	// ran before the turn (context_management).
	Item []byte
	// Seal, when the turn itself is the compaction (compaction_trigger),
	// seals the agent's answer, which is the summary: the item
	// {"id":"cmp_<run part>","type":"compaction","encrypted_content":…}
	// is then the output's only one and the summary is never sent in clear.
	Seal func(summary string) string
	// Usage is the compaction run's (context_management): it recorded it
	// on its own run, and the turn's Response reports it added to the
	// turn's.
	Usage runner.Usage
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
