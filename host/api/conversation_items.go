package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/conversation"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// The items' endpoints of the Conversations API; what a client adds is
// normalised by conversation.NewItems.

// AddConversationItems answers POST /v1/conversations/{id}/items: up to
// 20 items, appended in order; the reply lists the added items.
func (hs *Handlers) AddConversationItems(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	if _, err := includeParam(x); err != nil {
		return err
	}
	var body struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(x.Body, &body); err != nil {
		return apierr.InvalidBody("", "the body must be a JSON object with items: %v", err)
	}
	switch {
	case len(body.Items) == 0:
		return apierr.InvalidBody("items", "items must hold at least one item")
	case len(body.Items) > contract.MaxItemsPerCall:
		return apierr.InvalidBody("items", "at most %d items can be added at once", contract.MaxItemsPerCall)
	}
	taken := func(id string) (bool, error) {
		_, err := cs.GetConversationItem(ctx, x.Identity.TenantID, c.SessionID, id)
		if errors.Is(err, runner.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	// An id the conversation holds gets a new one (NewItems). A
	// concurrent append of the same id can land between the check and
	// this append (the store's runner.ErrDuplicateItem): the items are
	// made again, the id now found taken, once.
	var items []runner.ConversationItem
	for again := true; ; again = false {
		if items, err = conversation.NewItems(body.Items, "items", taken); err != nil {
			return err
		}
		err = cs.AppendConversationItems(ctx, x.Identity.TenantID, c.SessionID, items)
		if err == nil {
			break
		}
		var dup *runner.DuplicateItemError
		switch {
		case !errors.As(err, &dup):
			return conversationError(err, x.Request.PathValue("id"))
		case !again:
			return apierr.DuplicateItem("items", dup.ID)
		}
	}
	return WriteJSON(x, conversationItemPage(items, false))
}

// ListConversationItems answers GET /v1/conversations/{id}/items
// (?after=&limit=&order=&include=), newest first unless order=asc.
func (hs *Handlers) ListConversationItems(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	limit, desc, err := itemPaging(x, contract.ConversationItemsPaging)
	if err != nil {
		return err
	}
	if _, err := includeParam(x); err != nil {
		return err
	}
	after := x.Request.URL.Query().Get("after")
	items, more, err := cs.ConversationItems(ctx, x.Identity.TenantID, c.SessionID, after, limit, desc)
	if errors.Is(err, runner.ErrNotFound) {
		return apierr.InvalidBody("after", "after %q is not an item of this conversation", after)
	}
	if err != nil {
		return err
	}
	return WriteJSON(x, conversationItemPage(items, more))
}

// GetConversationItem answers GET /v1/conversations/{id}/items/{item_id}.
func (hs *Handlers) GetConversationItem(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	if _, err := includeParam(x); err != nil {
		return err
	}
	id := x.Request.PathValue("item_id")
	it, err := cs.GetConversationItem(ctx, x.Identity.TenantID, c.SessionID, id)
	if err != nil {
		return itemError(err, id)
	}
	return x.Reply.JSON(http.StatusOK, it.Data)
}

// DeleteConversationItem answers DELETE /v1/conversations/{id}/items/{item_id}
// with the Conversation, as OpenAI does.
func (hs *Handlers) DeleteConversationItem(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := hs.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	id := x.Request.PathValue("item_id")
	if err := cs.DeleteConversationItem(ctx, x.Identity.TenantID, c.SessionID, id); err != nil {
		return itemError(err, id)
	}
	return WriteJSON(x, conversationJSON(c))
}

func itemError(err error, id string) error {
	if errors.Is(err, runner.ErrNotFound) {
		e := apierr.NotFound("no item with id %q in this conversation", id)
		e.Err = err
		return e
	}
	return err
}

// includeParam reads include[] (or include): OpenAI's extra fields to
// return. runedge keeps no logprobs, search results or encrypted
// reasoning, so each known value is accepted and adds nothing.
func includeParam(x *filters.Exchange) ([]string, error) {
	q := x.Request.URL.Query()
	vals := append(q["include"], q["include[]"]...)
	for _, v := range vals {
		switch v {
		case "code_interpreter_call.outputs", "computer_call_output.output.image_url", "file_search_call.results",
			"message.input_image.image_url", "message.output_text.logprobs", "reasoning.encrypted_content",
			"web_search_call.action.sources", "web_search_call.results":
		default:
			return nil, apierr.InvalidBody("include", "include value %q is not supported", v)
		}
	}
	return vals, nil
}

// convItemPage is OpenAI's ConversationItemList: unlike the input item
// list, its first_id and last_id are strings, "" on an empty page.
type convItemPage struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID string            `json:"first_id"`
	LastID  string            `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

func conversationItemPage(items []runner.ConversationItem, more bool) convItemPage {
	page := convItemPage{Object: "list", Data: []json.RawMessage{}, HasMore: more}
	for _, it := range items {
		page.Data = append(page.Data, it.Data)
	}
	if len(items) > 0 {
		page.FirstID, page.LastID = items[0].ID, items[len(items)-1].ID
	}
	return page
}
