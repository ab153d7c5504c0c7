package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runedge/runedge/internal/contract"
)

// Conversations are sessions (docs/api.md "Conversations"): the OpenAI
// Conversations API names a session by conv_ and the session id's random
// part, as resp_ names a run (internal/contract). x-service-session-id, the native
// API's session_id and the conversation id are one identity, so a
// conversation is continued by either API.

// Conversation is a session's conversation record.
type Conversation struct {
	// SessionID is the session it is (contract.ConversationID gives its conv_ id).
	SessionID string
	TenantID  string
	CreatedAt int64
	// Metadata is the client's JSON object (up to 16 string pairs), "{}"
	// when it set none.
	Metadata json.RawMessage
}

// ConversationItem is one item of a conversation, as the client sent it
// or as a run produced it: an OpenAI Responses item (message,
// function_call, function_call_output, …) with its id.
type ConversationItem struct {
	ID   string
	Data json.RawMessage
}

// ConversationStore keeps conversations and their items. Like
// HistoryStore it is optional: the service checks for it. Every lookup is
// scoped by tenant and answers ErrNotFound for another tenant's ids and
// for deleted conversations.
type ConversationStore interface {
	// CreateConversation records a conversation and its first items.
	CreateConversation(ctx context.Context, c Conversation, items []ConversationItem) error
	// GetConversation returns an undeleted conversation of tenant.
	GetConversation(ctx context.Context, tenantID, sessionID string) (Conversation, error)
	// UpdateConversation replaces its metadata.
	UpdateConversation(ctx context.Context, tenantID, sessionID string, metadata json.RawMessage) (Conversation, error)
	// DeleteConversation marks it deleted and removes its items; the
	// session's runs stay.
	DeleteConversation(ctx context.Context, tenantID, sessionID string) error
	// AppendConversationItems adds items after the ones already there.
	AppendConversationItems(ctx context.Context, tenantID, sessionID string, items []ConversationItem) error
	// ConversationItems pages through the items: after the item with id
	// after ("" from the start; ErrNotFound if it is not an item of the
	// conversation), at most limit, newest first when desc. more says
	// whether items follow the page.
	ConversationItems(ctx context.Context, tenantID, sessionID, after string, limit int, desc bool) (items []ConversationItem, more bool, err error)
	// GetConversationItem returns one item of the conversation.
	GetConversationItem(ctx context.Context, tenantID, sessionID, itemID string) (ConversationItem, error)
	// DeleteConversationItem removes one item of the conversation.
	DeleteConversationItem(ctx context.Context, tenantID, sessionID, itemID string) error
}

// Conversations returns the store's conversations, or nil.
func (s *Service) Conversations() ConversationStore { return s.convs }

// freshConversation reports whether session is a conversation of tenant
// that has no run yet: its first run opens the session (a session
// exists, for the run store, while a run of it does). Two first runs of
// one conversation at once: the second finds it opened (ErrSessionExists)
// and joins it (record).
func (s *Service) freshConversation(ctx context.Context, tenantID, session string) (bool, error) {
	if s.convs == nil || !contract.IsSessionID(session) {
		return false, nil
	}
	if _, err := s.convs.GetConversation(ctx, tenantID, session); err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	// A session that has a run always will (runs are never removed):
	// once seen, it is not looked up again.
	key := cacheKey{tenantID, session}
	if _, ok := s.opened.Get(key); ok {
		return false, nil
	}
	runs, _, err := s.store.ListRuns(ctx, ListQuery{TenantID: tenantID, SessionID: session, Limit: 1})
	if err == nil && len(runs) > 0 {
		s.opened.Put(key, struct{}{}, 1)
	}
	return err == nil && len(runs) == 0, err
}

// conversationPage is how many items one store read of ReadConversation
// returns.
const conversationPage = 100

// ReadConversation returns the items of a tenant's conversation, oldest
// first, for a turn that continues it. A host keeps what it read last
// (historycache.go) and reads only the items added since, once the store's
// forget generation says none was removed. It is the history bound's reader
// for conversations: it stops at the first item past MaxHistoryBytes
// (HistoryBounds, limits.history.max_history_bytes, the bound
// previous_response_id's replay has) with a *BoundError naming
// conversation, so a conversation costs at most the bound to refuse.
// ErrNotFound: no such conversation of tenant (or it was deleted).
func (s *Service) ReadConversation(ctx context.Context, tenantID, session string) ([]json.RawMessage, error) {
	if s.convs == nil {
		return nil, ErrNotFound
	}
	key := cacheKey{tenantID, session}
	var out []json.RawMessage
	after := ""
	var gen int64
	if s.probe != nil {
		// Read before any item is (HistoryProbe): what is read under it
		// is what the store holds while it stays the same.
		g, err := s.probe.ForgetGeneration(ctx, tenantID)
		if err != nil {
			return nil, err
		}
		gen = g
	}
	if e, ok := s.convItems.Get(key); ok && s.probe != nil && e.gen == gen {
		// No item was removed since those were read, and items are only
		// appended after the others: only what follows is read.
		out = make([]json.RawMessage, len(e.items), len(e.items)+2)
		copy(out, e.items)
		after = e.last
	}
	items, last, err := s.readConversation(ctx, tenantID, session, after, out)
	if errors.Is(err, ErrNotFound) && after != "" {
		// The last item read was deleted after the generation was read.
		items, last, err = s.readConversation(ctx, tenantID, session, "", nil)
	}
	if err != nil || s.probe == nil {
		return items, err
	}
	if last == "" {
		s.convItems.Remove(key)
		return items, nil
	}
	size := 0
	for _, it := range items {
		size += len(it) + 64
	}
	// Shared with the caller, at its full capacity (an append copies it):
	// the items are read only (the request mapping maps them).
	items = items[:len(items):len(items)]
	s.convItems.Put(key, convRead{items: items, last: last, gen: gen}, size)
	return items, nil
}

// convRead is what a host last read of a conversation: its items, oldest
// first, the last one's id last, under the tenant's forget generation gen.
// items is shared and never modified.
type convRead struct {
	items []json.RawMessage
	last  string
	gen   int64
}

// readConversation appends to out the items of the conversation after
// the item after ("" from the start), within the history bound counted
// over all of out, and returns them with the last item's id ("" when
// there is none).
func (s *Service) readConversation(ctx context.Context, tenantID, session, after string, out []json.RawMessage) ([]json.RawMessage, string, error) {
	limit := s.bounds.MaxHistoryBytes
	var budget ByteBudget
	for _, it := range out {
		_ = budget.Spend(len(it), 0)
	}
	last := after
	for {
		items, more, err := s.convs.ConversationItems(ctx, tenantID, session, after, conversationPage, false)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			if budget.Spend(len(it.Data), limit) != nil {
				return nil, "", &BoundError{Param: "conversation", Msg: fmt.Sprintf(
					"the conversation's items hold more than %d bytes (limits.history.max_history_bytes)", limit)}
			}
			out = append(out, it.Data)
			last = it.ID
		}
		if !more || len(items) == 0 {
			return out, last, nil
		}
		after = items[len(items)-1].ID
	}
}
