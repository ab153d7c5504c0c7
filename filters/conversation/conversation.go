// Package conversation is the stage that continues a conversation on
// POST /v1/responses (the Responses API's conversation parameter, docs/api.md
// "Conversations"): it reads the conversation's items for the mapping stage
// (which maps them apart from the input: the agent receives them first, the
// response does not store them again), places the run in the
// conversation's session, and arranges for the turn (the new input, then
// the output) to be appended once the run completes.
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
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/runner"
)

// MaxHistoryBytes bounds the stored items a request continues: a
// conversation larger than this is refused (400) rather than read whole
// into memory for one turn.
const MaxHistoryBytes = 8 << 20

// page is how many items one store read returns.
const page = 100

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
		return apierr.NotFound("no conversation with id %q", id)
	}
	tenant := x.Identity.TenantID
	if _, err := cs.GetConversation(ctx, tenant, session); err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return apierr.NotFound("no conversation with id %q", id)
		}
		return err
	}
	input, err := newInput(gjson.GetBytes(x.Body, "input"))
	if err != nil {
		return err
	}
	history, err := historyOf(ctx, cs, tenant, session)
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
	var items []byte
	if len(history) > 0 {
		if items, err = json.Marshal(history); err != nil {
			return err
		}
	}
	body, err := sjson.SetRawBytes(x.Body, "input", b)
	if err == nil {
		body, err = sjson.DeleteBytes(body, "conversation")
	}
	if err != nil {
		return apierr.InvalidBody("input", "the input cannot be read: %v", err)
	}
	x.Body = body
	x.Conversation = &filters.Conversation{ID: id, SessionID: session, Items: items,
		Append: func(ctx context.Context, runID string, res *runner.Result) error {
			return cs.AppendConversationItems(ctx, tenant, session, append(input, outputItems(runID, res)...))
		}}
	if s.compact {
		// A compaction reads the conversation and adds nothing to it: its
		// summary is the client's to carry (filters/compaction).
		x.Conversation.Append = nil
	}
	return next.Handle(ctx, x)
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

// historyOf reads the conversation's items, oldest first, up to
// MaxHistoryBytes.
func historyOf(ctx context.Context, cs runner.ConversationStore, tenant, session string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	after, size := "", 0
	for {
		items, more, err := cs.ConversationItems(ctx, tenant, session, after, page, false)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if size += len(it.Data); size > MaxHistoryBytes {
				return nil, apierr.InvalidBody("conversation", "the conversation's items are larger than %d bytes", MaxHistoryBytes)
			}
			out = append(out, it.Data)
		}
		if !more || len(items) == 0 {
			return out, nil
		}
		after = items[len(items)-1].ID
	}
}

// outputItems are a completed run's output as the Response object lists
// it: the message (its id is the Response's) and the function calls.
func outputItems(runID string, res *runner.Result) []runner.ConversationItem {
	if res == nil {
		return nil
	}
	msgID := contract.MessageID(runID)
	var out []runner.ConversationItem
	if res.Text != "" || len(res.ToolCalls) == 0 {
		b, _ := json.Marshal(map[string]any{ // cannot fail: strings only
			"id": msgID, "type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": res.Text, "annotations": []any{}, "logprobs": []any{}}},
		})
		out = append(out, runner.ConversationItem{ID: msgID, Data: b})
	}
	for i, call := range res.ToolCalls {
		id := contract.CallID(msgID, i)
		out = append(out, runner.ConversationItem{ID: id,
			Data: abi.AppendFunctionCallItem(nil, id, call.ID, call.Name, call.Arguments, "completed")})
	}
	return out
}
