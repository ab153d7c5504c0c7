// Package conversation is the stage that continues a conversation on
// POST /v1/responses (the Responses API's conversation parameter, docs/api.md
// "Conversations"): it arranges for the conversation's items to be read,
// under the history bound and inside the run's admission slot
// (runner.Service.ReadConversation, filters.Conversation.Messages), for the
// mapping stage to map apart from the input (the agent receives them
// first, the response does not store them again), places the run in the
// conversation's session, and arranges for the turn (the new input, then
// the output items of the Response the client got) to be appended once
// the run completes.
//
// A conversation is a session: its id is conv_ where the session's is
// sess_ (contract.SessionIDOf).
package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

var conversationKey = []byte(`"conversation"`)

// Stage is the conversation stage.
type Stage struct {
	svc     *runner.Service
	compact bool
}

var _ filters.Stage = (*Stage)(nil)

// New builds the stage on the run service (its conversation store).
func New(svc *runner.Service) *Stage { return &Stage{svc: svc} }

// NewCompact builds the stage of POST /v1/responses/compact (its requests
// carry the Responses endpoint until the compaction stage): the
// conversation's items are what is compacted, and the compaction adds
// nothing to the conversation.
func NewCompact(svc *runner.Service) *Stage { return &Stage{svc: svc, compact: true} }

// Name implements filters.Stage.
func (*Stage) Name() string { return contract.StageConversation }

// Handle implements filters.Stage. Requests of other endpoints, and
// Responses requests without a conversation, pass untouched.
func (s *Stage) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	// A byte search first: most requests name no conversation, and
	// finding the key in a large input is many times cheaper than parsing
	// to it (BenchmarkPassThrough).
	if x.Endpoint != filters.Responses || !bytes.Contains(x.Body, conversationKey) {
		return next.Handle(ctx, x)
	}
	c := gjson.GetBytes(x.Body, "conversation")
	if !c.Exists() || c.Type == gjson.Null {
		return next.Handle(ctx, x)
	}
	id := c.Str
	if c.IsObject() {
		id = c.Get("id").Str
	}
	if id == "" || (c.Type != gjson.String && !c.IsObject()) {
		return apierr.InvalidBody("conversation", "conversation must be a conversation id or an object with its id")
	}
	if p := gjson.GetBytes(x.Body, "previous_response_id"); p.Exists() && p.Type != gjson.Null {
		return apierr.InvalidBody("conversation", "previous_response_id and conversation cannot be used together: a conversation already holds the earlier turns")
	}
	cs := s.svc.Conversations()
	session, ok := contract.SessionIDOf(id)
	if cs == nil || !ok {
		return notFound(id)
	}
	tenant := x.Identity.TenantID
	if _, err := cs.GetConversation(ctx, tenant, session); err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return notFound(id)
		}
		return err
	}
	input, err := newInput(gjson.GetBytes(x.Body, "input"))
	if err != nil {
		return err
	}
	newIn := make([]json.RawMessage, 0, len(input))
	for _, it := range input {
		newIn = append(newIn, it.Data)
	}
	b, err := json.Marshal(newIn)
	if err != nil {
		return err
	}
	body, err := sjson.SetRawBytes(x.Body, "input", b)
	if err == nil {
		body, err = sjson.DeleteBytes(body, "conversation")
	}
	if err != nil {
		return apierr.InvalidBody("input", "the input cannot be read: %v", err)
	}
	x.Body = body
	svc := s.svc
	x.Conversation = &filters.Conversation{ID: id, SessionID: session,
		Read: func(ctx context.Context) ([]json.RawMessage, error) {
			items, err := svc.ReadConversation(ctx, tenant, session)
			if errors.Is(err, runner.ErrNotFound) {
				return nil, notFound(id)
			}
			return items, err
		},
		Append: func(ctx context.Context, runID string, object []byte) error {
			out, err := OutputItems(object)
			if err != nil {
				return err
			}
			err = cs.AppendConversationItems(ctx, tenant, session, append(input, out...))
			if errors.Is(err, runner.ErrNotFound) {
				// Deleted while the turn ran: the turn is recorded and
				// answered; there is nothing left to add it to.
				return nil
			}
			return err
		}}
	if s.compact {
		// A compaction reads the conversation and adds nothing to it: its
		// summary is the client's to carry (filters/compaction).
		x.Conversation.Append = nil
	}
	return next.Handle(ctx, x)
}

// notFound is the 404 of a conversation that does not exist (or no
// longer does), naming the parameter.
func notFound(id string) *apierr.Error {
	e := apierr.NotFound("no conversation with id %q", id)
	e.Param = "conversation"
	return e
}

// newInput is the request's input as conversation items: a string is one
// user message, an array its items.
func newInput(in gjson.Result) ([]runner.ConversationItem, error) {
	var raw []json.RawMessage
	switch {
	case !in.Exists() || in.Type == gjson.Null:
	case in.Type == gjson.String:
		b, _ := json.Marshal(map[string]string{"role": "user", "content": in.Str}) // cannot fail
		raw = append(raw, b)
	case in.IsArray():
		for _, v := range in.Array() {
			raw = append(raw, json.RawMessage(v.Raw))
		}
	default:
		return nil, apierr.InvalidBody("input", "input must be a string or an array of items")
	}
	return NewItems(raw, "input", nil)
}

// OutputItems are the items a completed turn adds to its conversation
// after its input: the output of the Response the client got (object,
// after the result plugin), as it got them, with their types and ids.
// A compaction item a turn's output starts with (context_management) is
// the client's to carry, as POST /v1/responses/compact's is, and is not
// added.
func OutputItems(object []byte) ([]runner.ConversationItem, error) {
	if len(object) == 0 {
		return nil, nil // no Response was made: the turn added its input only
	}
	out := gjson.GetBytes(object, "output")
	if !out.IsArray() {
		return nil, fmt.Errorf("conversation: the Response has no output array")
	}
	var items []runner.ConversationItem
	for _, it := range out.Array() {
		if it.Get("type").Str == "compaction" {
			continue
		}
		id := it.Get("id").Str
		if id == "" {
			return nil, fmt.Errorf("conversation: an output item of the Response has no id")
		}
		items = append(items, runner.ConversationItem{ID: id, Data: json.RawMessage(it.Raw)})
	}
	return items, nil
}
