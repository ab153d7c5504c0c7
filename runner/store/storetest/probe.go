package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/runedge/runedge/runner"
)

// HistoryProbe checks runner.HistoryProbe: the counts a host's history
// cache trusts change with every addition and removal of items, on any
// host, and are the tenant's only.
func HistoryProbe(t *testing.T, open func(t *testing.T) runner.Store) {
	s := open(t)
	h, _ := s.(runner.HistoryStore)
	cs, _ := s.(runner.ConversationStore)
	p, ok := s.(runner.HistoryProbe)
	if !ok || h == nil || cs == nil {
		t.Fatalf("%T does not implement runner.HistoryProbe, HistoryStore and ConversationStore", s)
	}
	c := ctx(t)
	msg := func(role, text string) runner.Message { return runner.Message{Role: role, Content: text} }
	begin := func(run, prev string) {
		t.Helper()
		if err := h.BeginResponse(c, runner.ResponseRecord{RunID: run, TenantID: "t1", PreviousRunID: prev},
			[]runner.Item{{ID: "msg_in_" + run, RunID: run, Message: msg("user", run)}}); err != nil {
			t.Fatal(err)
		}
	}
	end := func(run string) {
		t.Helper()
		if err := h.EndResponse(c, run, []byte(`{"id":"resp_`+run+`"}`),
			[]runner.Item{{ID: "msg_out_" + run, RunID: run, Output: true, Message: msg("assistant", run)}}); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(tenant, run string, maxTurns, turns, items, withItems int) {
		t.Helper()
		gt, gi, gw, err := p.ChainCounts(c, tenant, run, maxTurns)
		if err != nil || gt != turns || gi != items || gw != withItems {
			t.Fatalf("ChainCounts(%s, %s, %d) = %d turns, %d items, %d with items, %v; want %d, %d, %d",
				tenant, run, maxTurns, gt, gi, gw, err, turns, items, withItems)
		}
	}
	begin("r1", "")
	end("r1")
	begin("r2", "r1")
	counts("t1", "r2", runner.MaxTurns, 2, 3, 2) // r2's output is not there yet
	end("r2")
	begin("r3", "r2")
	end("r3")
	counts("t1", "r3", runner.MaxTurns, 3, 6, 3)
	counts("t1", "r3", 2, 2, 4, 2)
	for _, tenant := range []string{"t2", ""} {
		if _, _, _, err := p.ChainCounts(c, tenant, "r3", runner.MaxTurns); !errors.Is(err, runner.ErrNotFound) {
			t.Errorf("ChainCounts of another tenant (%q): %v, want ErrNotFound", tenant, err)
		}
	}
	if _, _, _, err := p.ChainCounts(c, "t1", "r9", runner.MaxTurns); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ChainCounts of an unknown response: %v, want ErrNotFound", err)
	}
	itemCounts := func(items, withItems int, runs ...string) {
		t.Helper()
		gi, gw, err := p.ItemCounts(c, runs)
		if err != nil || gi != items || gw != withItems {
			t.Fatalf("ItemCounts(%v) = %d items, %d with items, %v; want %d, %d", runs, gi, gw, err, items, withItems)
		}
	}
	itemCounts(6, 3, "r1", "r2", "r3")
	itemCounts(2, 1, "r2", "r9")
	// A response deleted in the chain holds no item any more; the chain
	// still walks through it. The last one deleted: not found.
	if err := h.DeleteResponse(c, "t1", "r2"); err != nil {
		t.Fatal(err)
	}
	counts("t1", "r3", runner.MaxTurns, 3, 4, 2)
	itemCounts(4, 2, "r1", "r2", "r3")
	if err := h.DeleteResponse(c, "t1", "r3"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.ChainCounts(c, "t1", "r3", runner.MaxTurns); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ChainCounts of a deleted response: %v, want ErrNotFound", err)
	}
	begin("r4", "r1")
	counts("t1", "r4", runner.MaxTurns, 2, 3, 2)

	item := func(i int) runner.ConversationItem {
		return runner.ConversationItem{ID: fmt.Sprintf("msg_%02d", i), Data: json.RawMessage(fmt.Sprintf(`{"id":"msg_%02d"}`, i))}
	}
	if err := cs.CreateConversation(c, runner.Conversation{SessionID: "sess_p", TenantID: "t1", CreatedAt: 1_700_000_000, Metadata: json.RawMessage(`{}`)},
		[]runner.ConversationItem{item(0), item(1), item(2)}); err != nil {
		t.Fatal(err)
	}
	count := func(tenant, upTo string, want int) {
		t.Helper()
		if n, err := p.ConversationCount(c, tenant, "sess_p", upTo); err != nil || n != want {
			t.Fatalf("ConversationCount(%s, %s) = %d, %v; want %d", tenant, upTo, n, err, want)
		}
	}
	count("t1", "msg_02", 3)
	count("t1", "msg_01", 2)
	count("t2", "msg_02", 0)
	count("t1", "msg_99", 0)
	if err := cs.AppendConversationItems(c, "t1", "sess_p", []runner.ConversationItem{item(3)}); err != nil {
		t.Fatal(err)
	}
	count("t1", "msg_02", 3)
	count("t1", "msg_03", 4)
	if err := cs.DeleteConversationItem(c, "t1", "sess_p", "msg_01"); err != nil {
		t.Fatal(err)
	}
	count("t1", "msg_02", 2)
	if err := cs.DeleteConversationItem(c, "t1", "sess_p", "msg_03"); err != nil {
		t.Fatal(err)
	}
	count("t1", "msg_03", 0)
	if err := cs.DeleteConversation(c, "t1", "sess_p"); err != nil {
		t.Fatal(err)
	}
	count("t1", "msg_02", 0)
}
