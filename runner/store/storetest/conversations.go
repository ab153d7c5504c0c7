package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/runedge/runedge/runner"
)

// Conversations checks a runner.ConversationStore: create with items,
// metadata update, paging both ways with after, one item's read and
// delete, tenancy (another tenant's conversation is unknown) and deletion.
func Conversations(t *testing.T, open func(t *testing.T) runner.Store) {
	s := open(t)
	cs, ok := s.(runner.ConversationStore)
	if !ok {
		t.Fatalf("%T does not implement runner.ConversationStore", s)
	}
	c := ctx(t)
	item := func(i int) runner.ConversationItem {
		return runner.ConversationItem{ID: fmt.Sprintf("msg_%02d", i), Data: json.RawMessage(fmt.Sprintf(`{"id":"msg_%02d","n":%d}`, i, i))}
	}
	ids := func(items []runner.ConversationItem) string {
		out := ""
		for _, it := range items {
			out += it.ID[4:] + " "
		}
		return out
	}
	conv := runner.Conversation{SessionID: "sess_a", TenantID: "t1", CreatedAt: 1_700_000_000, Metadata: json.RawMessage(`{"k":"v"}`)}
	if err := cs.CreateConversation(c, conv, []runner.ConversationItem{item(0), item(1)}); err != nil {
		t.Fatal(err)
	}
	if err := cs.AppendConversationItems(c, "t1", "sess_a", []runner.ConversationItem{item(2), item(3), item(4)}); err != nil {
		t.Fatal(err)
	}
	// An id the conversation holds (two appends that raced past their
	// callers' checks): the store names it and appends nothing.
	var dup *runner.DuplicateItemError
	if err := cs.AppendConversationItems(c, "t1", "sess_a", []runner.ConversationItem{item(5), item(3)}); !errors.As(err, &dup) || dup.ID != "msg_03" || !errors.Is(err, runner.ErrDuplicateItem) {
		t.Fatalf("appending a held id: %v, want a DuplicateItemError naming msg_03", err)
	}
	got, err := cs.GetConversation(c, "t1", "sess_a")
	if err != nil || got.CreatedAt != conv.CreatedAt || string(got.Metadata) != `{"k":"v"}` {
		t.Fatalf("GetConversation = %+v, %v", got, err)
	}
	page := func(after string, limit int, desc bool, want string, wantMore bool) {
		t.Helper()
		items, more, err := cs.ConversationItems(c, "t1", "sess_a", after, limit, desc)
		if err != nil || ids(items) != want || more != wantMore {
			t.Fatalf("items(after %q, %d, desc %v) = %q more %v, %v; want %q more %v", after, limit, desc, ids(items), more, err, want, wantMore)
		}
	}
	page("", 10, false, "00 01 02 03 04 ", false)
	page("", 2, true, "04 03 ", true)
	page("msg_03", 2, true, "02 01 ", true)
	page("msg_01", 10, false, "02 03 04 ", false)
	if _, _, err := cs.ConversationItems(c, "t1", "sess_a", "msg_zz", 10, false); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("unknown after: %v", err)
	}
	it, err := cs.GetConversationItem(c, "t1", "sess_a", "msg_02")
	if err != nil || string(it.Data) != `{"id":"msg_02","n":2}` {
		t.Fatalf("GetConversationItem = %+v, %v", it, err)
	}
	if err := cs.DeleteConversationItem(c, "t1", "sess_a", "msg_02"); err != nil {
		t.Fatal(err)
	}
	page("", 10, false, "00 01 03 04 ", false)
	if err := cs.DeleteConversationItem(c, "t1", "sess_a", "msg_02"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if got, err = cs.UpdateConversation(c, "t1", "sess_a", json.RawMessage(`{"k":"w"}`)); err != nil || string(got.Metadata) != `{"k":"w"}` {
		t.Fatalf("UpdateConversation = %+v, %v", got, err)
	}

	// Another tenant sees nothing, and changes nothing.
	for name, err := range map[string]error{
		"get":         func() error { _, err := cs.GetConversation(c, "t2", "sess_a"); return err }(),
		"update":      func() error { _, err := cs.UpdateConversation(c, "t2", "sess_a", json.RawMessage(`{}`)); return err }(),
		"append":      cs.AppendConversationItems(c, "t2", "sess_a", []runner.ConversationItem{item(9)}),
		"items":       func() error { _, _, err := cs.ConversationItems(c, "t2", "sess_a", "", 10, false); return err }(),
		"item":        func() error { _, err := cs.GetConversationItem(c, "t2", "sess_a", "msg_00"); return err }(),
		"delete item": cs.DeleteConversationItem(c, "t2", "sess_a", "msg_00"),
		"delete":      cs.DeleteConversation(c, "t2", "sess_a"),
	} {
		if !errors.Is(err, runner.ErrNotFound) {
			t.Errorf("tenant t2 %s: %v, want ErrNotFound", name, err)
		}
	}
	page("", 10, false, "00 01 03 04 ", false)
	if got, _ = cs.GetConversation(c, "t1", "sess_a"); string(got.Metadata) != `{"k":"w"}` {
		t.Fatalf("metadata after t2's update: %s", got.Metadata)
	}

	if err := cs.DeleteConversation(c, "t1", "sess_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetConversation(c, "t1", "sess_a"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("deleted conversation: %v", err)
	}
	if _, err := cs.GetConversationItem(c, "t1", "sess_a", "msg_00"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("item of a deleted conversation: %v", err)
	}
	if err := cs.AppendConversationItems(c, "t1", "sess_a", []runner.ConversationItem{item(9)}); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("append to a deleted conversation: %v", err)
	}
}
