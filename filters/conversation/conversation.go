// Package conversation is the stage that continues a conversation on
// POST /v1/responses (the Responses API's conversation parameter, docs/api.md
// "Conversations"): it checks the conversation and puts it on the turn
// (filters/turn, Turn.Conversation), whose room reads its items under the
// history bound and inside the run's admission slot
// (runner.Service.ReadConversation, turn.Turn.History) for the mapping
// stage to map apart from the input (the agent receives them first, the
// response does not store them again), places the run in the
// conversation's session, and appends the turn (the new input, then the
// output items of the Response the client got) once the run completes
// (turn.Turn.Commit).
//
// A conversation is a session: its id is conv_ where the session's is
// sess_ (contract.SessionIDOf).
package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/turn"
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
	c := x.Member("conversation")
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
	if p := x.Member("previous_response_id"); p.Exists() && p.Type != gjson.Null {
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
	var taken func(string) (bool, error)
	if !s.compact {
		taken = inConversation(ctx, cs, tenant, session)
	}
	input, err := newInput(x.Member("input"), taken)
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
	conv := &turn.Conversation{ID: id, SessionID: session, TenantID: tenant, Input: input, Store: cs,
		Read: func(ctx context.Context) ([]json.RawMessage, error) {
			items, err := svc.ReadConversation(ctx, tenant, session)
			if errors.Is(err, runner.ErrNotFound) {
				return nil, notFound(id)
			}
			return items, err
		}}
	if s.compact {
		// A compaction reads the conversation and adds nothing to it: its
		// summary is the client's to carry (filters/compaction).
		conv.Store = nil
	}
	x.TurnOf().Conversation = conv
	return next.Handle(ctx, x)
}

// notFound is the 404 of a conversation that does not exist (or no
// longer does), naming the parameter.
func notFound(id string) *apierr.Error {
	e := apierr.NotFound("no conversation with id %q", id)
	e.Param = "conversation"
	return e
}

// inConversation is NewItems' taken for a turn's input: an id the client
// chose that already names an item of the conversation is refused as
// OpenAI refuses it (400 naming input, "Duplicate item found with id …"),
// before anything runs or is stored. Storing the item under a new id
// instead would leave the client believing its id names the item it
// sent, while the conversation's item of that id is the older one; and
// appending it as it is would break the conversation's one item per id.
// Two turns that race past this check with the same new id meet the
// store's unique index at their commits: the later one is the same 400
// (runner.ErrDuplicateItem, turn.Turn.Commit), its run recorded.
func inConversation(ctx context.Context, cs runner.ConversationStore, tenant, session string) func(string) (bool, error) {
	return func(id string) (bool, error) {
		_, err := cs.GetConversationItem(ctx, tenant, session, id)
		switch {
		case errors.Is(err, runner.ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		}
		return false, apierr.DuplicateItem("input", id)
	}
}

// newInput is the request's input as conversation items: a string is one
// user message, an array its items. taken (nil: none is) is NewItems'.
func newInput(in gjson.Result, taken func(string) (bool, error)) ([]runner.ConversationItem, error) {
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
	return NewItems(raw, "input", taken)
}
