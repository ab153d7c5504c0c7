package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// A conversation's items are kept as OpenAI Responses items: what a
// client adds is normalised once, on the way in (newConversationItems),
// to the shape OpenAI lists it in, so a listing is the stored bytes.

// addConversationItems answers POST /v1/conversations/{id}/items: up to
// 20 items, appended in order; the reply lists the added items.
func (s *Server) addConversationItems(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := s.conversationOf(ctx, x)
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
	case len(body.Items) > runner.MaxConversationItemsPerCall:
		return apierr.InvalidBody("items", "at most %d items can be added at once", runner.MaxConversationItemsPerCall)
	}
	taken := func(id string) (bool, error) {
		_, err := cs.GetConversationItem(ctx, x.Identity.TenantID, c.SessionID, id)
		if errors.Is(err, runner.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	items, err := newConversationItems(body.Items, taken)
	if err != nil {
		return err
	}
	if err := cs.AppendConversationItems(ctx, x.Identity.TenantID, c.SessionID, items); err != nil {
		return conversationError(err, x.Request.PathValue("id"))
	}
	return writeJSON(x, conversationItemPage(items, false))
}

// listConversationItems answers GET /v1/conversations/{id}/items
// (?after=&limit=&order=&include=), newest first unless order=asc.
func (s *Server) listConversationItems(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := s.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	q := x.Request.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return apierr.InvalidBody("limit", "limit must be an integer from 1 to 100")
		}
		limit = n
	}
	desc := true
	switch q.Get("order") {
	case "", "desc":
	case "asc":
		desc = false
	default:
		return apierr.InvalidBody("order", "order must be asc or desc")
	}
	if _, err := includeParam(x); err != nil {
		return err
	}
	after := q.Get("after")
	items, more, err := cs.ConversationItems(ctx, x.Identity.TenantID, c.SessionID, after, limit, desc)
	if errors.Is(err, runner.ErrNotFound) {
		return apierr.InvalidBody("after", "after %q is not an item of this conversation", after)
	}
	if err != nil {
		return err
	}
	return writeJSON(x, conversationItemPage(items, more))
}

// getConversationItem answers GET /v1/conversations/{id}/items/{item_id}.
func (s *Server) getConversationItem(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := s.conversationOf(ctx, x)
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

// deleteConversationItem answers DELETE /v1/conversations/{id}/items/{item_id}
// with the Conversation, as OpenAI does.
func (s *Server) deleteConversationItem(ctx context.Context, x *filters.Exchange) error {
	cs, c, err := s.conversationOf(ctx, x)
	if err != nil {
		return err
	}
	id := x.Request.PathValue("item_id")
	if err := cs.DeleteConversationItem(ctx, x.Identity.TenantID, c.SessionID, id); err != nil {
		return itemError(err, id)
	}
	return writeJSON(x, conversationJSON(c))
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

// newConversationItems normalises the items a client adds (OpenAI's
// input item shapes) to the items a conversation lists: every item gets a
// type, an id (the client's unless taken, else a new one) and, where
// OpenAI's item has one, a status; a message's string content becomes
// one input_text (output_text for the assistant) part. taken (nil: none
// is) reports an id already in the conversation.
func newConversationItems(raw []json.RawMessage, taken func(string) (bool, error)) ([]runner.ConversationItem, error) {
	out := make([]runner.ConversationItem, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		param := "items[" + strconv.Itoa(i) + "]"
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil || m == nil {
			return nil, apierr.InvalidBody(param, "an item must be a JSON object")
		}
		prefix, err := normaliseItem(m, param)
		if err != nil {
			return nil, err
		}
		id, _ := m["id"].(string)
		if id != "" && !seen[id] && taken != nil {
			t, err := taken(id)
			if err != nil {
				return nil, err
			}
			seen[id] = t
		}
		if id == "" || seen[id] {
			id = runner.NewID(prefix)
		}
		seen[id] = true
		m["id"] = id
		b, err := json.Marshal(m)
		if err != nil {
			return nil, apierr.InvalidBody(param, "the item cannot be stored: %v", err)
		}
		out = append(out, runner.ConversationItem{ID: id, Data: b})
	}
	return out, nil
}

// normaliseItem fills in an item's type, status and message content in
// place and returns the prefix of the id it gets when it has none.
func normaliseItem(m map[string]any, param string) (string, error) {
	typ, _ := m["type"].(string)
	if typ == "" {
		if _, ok := m["role"]; !ok {
			return "", apierr.InvalidBody(param+".type", "an item needs a type (or a role, for a message)")
		}
		typ = "message"
		m["type"] = typ
	}
	switch typ {
	case "message":
		role, _ := m["role"].(string)
		part := "input_text"
		switch role {
		case "assistant":
			part = "output_text"
		case "user", "system", "developer":
		default:
			return "", apierr.InvalidBody(param+".role", "role must be user, assistant, system or developer")
		}
		switch c := m["content"].(type) {
		case string:
			p := map[string]any{"type": part, "text": c}
			if part == "output_text" {
				p["annotations"], p["logprobs"] = []any{}, []any{}
			}
			m["content"] = []any{p}
		case []any:
		default:
			return "", apierr.InvalidBody(param+".content", "content must be a string or an array of content parts")
		}
		setDefault(m, "status", "completed")
		return "msg_", nil
	case "function_call":
		for _, k := range []string{"call_id", "name", "arguments"} {
			if _, ok := m[k].(string); !ok {
				return "", apierr.InvalidBody(param+"."+k, "a function_call needs %s (a string)", k)
			}
		}
		setDefault(m, "status", "completed")
		return "fc_", nil
	case "function_call_output":
		if _, ok := m["call_id"].(string); !ok {
			return "", apierr.InvalidBody(param+".call_id", "a function_call_output needs call_id (a string)")
		}
		if _, ok := m["output"]; !ok {
			return "", apierr.InvalidBody(param+".output", "a function_call_output needs output")
		}
		setDefault(m, "status", "completed")
		return "fco_", nil
	case "item_reference":
		e := apierr.New(http.StatusBadRequest, apierr.TypeInvalidRequest, apierr.CodeUnsupportedParameter,
			"item_reference items cannot be added to a conversation; add the item itself")
		e.Param = param + ".type"
		return "", e
	}
	return "item_", nil
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok || m[k] == nil {
		m[k] = v
	}
}
