package api

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/conversation"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/metadata"
	"github.com/runedge/runedge/runner"
)

// The Conversations API (docs/api.md "Conversations"): a conversation is a
// session, named conv_ where the session is sess_ (contract.SessionIDOf).
// Every lookup is scoped to the caller's tenant; another tenant's
// conversation, a deleted one and an unknown id all answer 404.

// conversationObject is OpenAI's Conversation.
type conversationObject struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	CreatedAt int64           `json:"created_at"`
	Metadata  json.RawMessage `json:"metadata"`
}

func conversationJSON(c runner.Conversation) conversationObject {
	return conversationObject{contract.ConversationID(c.SessionID), "conversation", c.CreatedAt, c.Metadata}
}

// conversationStore returns the store's conversations, or a 404 when it
// keeps none (the path answers as an unknown conversation would).
func (hs *Handlers) conversationStore(x *filters.Exchange) (runner.ConversationStore, error) {
	cs := hs.Runs.Conversations()
	if cs == nil {
		return nil, apierr.NotFound("this run store keeps no conversations")
	}
	return cs, nil
}

// conversationOf looks up the path's conversation of the caller's tenant.
func (hs *Handlers) conversationOf(ctx context.Context, x *filters.Exchange) (runner.ConversationStore, runner.Conversation, error) {
	cs, err := hs.conversationStore(x)
	if err != nil {
		return nil, runner.Conversation{}, err
	}
	id := x.Request.PathValue("id")
	session, ok := contract.SessionIDOf(id)
	if !ok {
		return nil, runner.Conversation{}, apierr.NotFound("no conversation with id %q", id)
	}
	c, err := cs.GetConversation(ctx, x.Identity.TenantID, session)
	return cs, c, conversationError(err, id)
}

// conversationError maps the store's ErrNotFound to the 404 of the
// conversation id; other errors (an outage) pass as they are.
func conversationError(err error, id string) error {
	if errors.Is(err, runner.ErrNotFound) {
		e := apierr.NotFound("no conversation with id %q", id)
		e.Err = err
		return e
	}
	return err
}

// CreateConversation answers POST /v1/conversations.
func (hs *Handlers) CreateConversation(ctx context.Context, x *filters.Exchange) error {
	cs, err := hs.conversationStore(x)
	if err != nil {
		return err
	}
	var body struct {
		Items    []json.RawMessage `json:"items"`
		Metadata json.RawMessage   `json:"metadata"`
	}
	if len(x.Body) > 0 {
		if err := json.Unmarshal(x.Body, &body); err != nil {
			return apierr.InvalidBody("", "the body must be a JSON object with optional items and metadata: %v", err)
		}
	}
	meta, err := checkMetadata(body.Metadata)
	if err != nil {
		return err
	}
	if len(body.Items) > contract.MaxItemsPerCall {
		return apierr.InvalidBody("items", "at most %d items can be added at once", contract.MaxItemsPerCall)
	}
	items, err := conversation.NewItems(body.Items, "items", nil)
	if err != nil {
		return err
	}
	c := runner.Conversation{SessionID: runner.NewID(contract.SessionPrefix), TenantID: x.Identity.TenantID,
		CreatedAt: time.Now().Unix(), Metadata: meta}
	if err := cs.CreateConversation(ctx, c, items); err != nil {
		return err
	}
	return WriteJSON(x, conversationJSON(c))
}

// GetConversation answers GET /v1/conversations/{id}.
func (hs *Handlers) GetConversation(ctx context.Context, x *filters.Exchange) error {
	_, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	return WriteJSON(x, conversationJSON(c))
}

// UpdateConversation answers POST /v1/conversations/{id}: metadata is
// replaced (required, as at OpenAI).
func (hs *Handlers) UpdateConversation(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	var body struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(x.Body, &body); err != nil {
		return apierr.InvalidBody("", "the body must be a JSON object with metadata: %v", err)
	}
	if body.Metadata == nil {
		return apierr.InvalidBody("metadata", "metadata is required")
	}
	meta, err := checkMetadata(body.Metadata)
	if err != nil {
		return err
	}
	c, err = cs.UpdateConversation(ctx, x.Identity.TenantID, c.SessionID, meta)
	if err != nil {
		return conversationError(err, x.Request.PathValue("id"))
	}
	return WriteJSON(x, conversationJSON(c))
}

// DeleteConversation answers DELETE /v1/conversations/{id}: the
// conversation and its items go; the session's runs stay in the history.
func (hs *Handlers) DeleteConversation(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	if err := cs.DeleteConversation(ctx, x.Identity.TenantID, c.SessionID); err != nil {
		return conversationError(err, x.Request.PathValue("id"))
	}
	return WriteJSON(x, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{contract.ConversationID(c.SessionID), "conversation.deleted", true})
}

// checkMetadata checks metadata as every endpoint does (internal/metadata)
// and returns it compact, "{}" for none.
func checkMetadata(raw json.RawMessage) (json.RawMessage, error) {
	if err := metadata.CheckJSON(raw); err != nil {
		return nil, apierr.InvalidBody("metadata", "%v", err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, apierr.InvalidBody("metadata", "metadata must be an object of string values")
	}
	b, _ := json.Marshal(m) // cannot fail: strings only
	return b, nil
}
