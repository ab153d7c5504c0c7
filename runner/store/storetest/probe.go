package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// HistoryProbe checks runner.HistoryProbe's ChainCounts: the counts a
// host checks a chain with when it first keeps it.
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
	// A response deleted in the chain holds no item any more; the chain
	// still walks through it. The last one deleted: not found.
	if err := h.DeleteResponse(c, "t1", "r2"); err != nil {
		t.Fatal(err)
	}
	counts("t1", "r3", runner.MaxTurns, 3, 4, 2)
	if err := h.DeleteResponse(c, "t1", "r3"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.ChainCounts(c, "t1", "r3", runner.MaxTurns); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ChainCounts of a deleted response: %v, want ErrNotFound", err)
	}
	begin("r4", "r1")
	counts("t1", "r4", runner.MaxTurns, 2, 3, 2)
}

// ForgetGeneration checks runner.HistoryProbe's ForgetGeneration, the one
// row a host's history cache trusts: every write that removes items of a
// tenant's history raises that tenant's generation, no other tenant's,
// and writes that only add items leave it as it is.
func ForgetGeneration(t *testing.T, open func(t *testing.T) runner.Store) {
	s := open(t)
	cs, _ := s.(runner.ConversationStore)
	p, ok := s.(runner.HistoryProbe)
	if !ok || cs == nil {
		t.Fatalf("%T does not implement runner.HistoryProbe and ConversationStore", s)
	}
	c := ctx(t)
	tenants := []string{"t1", "t2", "t3"}
	gens := func() map[string]int64 {
		t.Helper()
		g := map[string]int64{}
		for _, tenant := range tenants {
			n, err := p.ForgetGeneration(c, tenant)
			if err != nil {
				t.Fatalf("ForgetGeneration(%s): %v", tenant, err)
			}
			g[tenant] = n
		}
		return g
	}
	// changed checks that write raised the generation of exactly the
	// tenants raised.
	changed := func(what string, write func() error, raised ...string) {
		t.Helper()
		before := gens()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		after := gens()
		for _, tenant := range tenants {
			want := slices.Contains(raised, tenant)
			if got := after[tenant] != before[tenant]; got != want {
				t.Errorf("%s: generation of %s %d -> %d; want changed: %v", what, tenant, before[tenant], after[tenant], want)
			}
		}
	}
	sess := map[string]*session{}
	turns := map[string][]turnRecord{}
	changed("turns that add items", func() error {
		for _, tenant := range tenants {
			sess[tenant] = newSession(t, s, tenant)
			turns[tenant] = append(turns[tenant], sess[tenant].turn("u1", "a1", true), sess[tenant].turn("u2", "a2", false))
		}
		return nil
	})
	changed("delete a response", func() error { return sess["t1"].h.DeleteResponse(c, "t1", turns["t1"][1].run.ID) }, "t1")
	changed("delete another tenant's response", func() error {
		if err := sess["t1"].h.DeleteResponse(c, "t1", turns["t2"][1].run.ID); !errors.Is(err, runner.ErrNotFound) {
			return fmt.Errorf("deleting another tenant's response: %v, want ErrNotFound", err)
		}
		return nil
	})
	// Retention: t2's and t3's first turns ended before the cutoff, t1's
	// first and t2's second after it.
	for _, e := range []struct {
		run string
		at  int64
	}{{turns["t1"][0].run.ID, after(300)}, {turns["t2"][0].run.ID, after(100)}, {turns["t2"][1].run.ID, after(300)}, {turns["t3"][0].run.ID, after(100)}, {turns["t3"][1].run.ID, after(100)}} {
		if err := s.Transition(c, e.run, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(e.at)}); err != nil {
			t.Fatal(err)
		}
	}
	changed("end runs", func() error { return nil })
	changed("purge", func() error { _, err := s.PurgeBefore(c, after(200)); return err }, "t2", "t3")
	changed("purge that forgets nothing more", func() error { _, err := s.PurgeBefore(c, after(200)); return err })
	changed("purge the rest", func() error { _, err := s.PurgeBefore(c, after(400)); return err }, "t1", "t2")

	item := func(i int) runner.ConversationItem {
		return runner.ConversationItem{ID: fmt.Sprintf("msg_%02d", i), Data: json.RawMessage(fmt.Sprintf(`{"id":"msg_%02d"}`, i))}
	}
	changed("create and append to conversations", func() error {
		for _, tenant := range []string{"t1", "t2"} {
			if err := cs.CreateConversation(c, runner.Conversation{SessionID: "sess_g" + tenant, TenantID: tenant, CreatedAt: 1_700_000_000, Metadata: json.RawMessage(`{}`)},
				[]runner.ConversationItem{item(0), item(1)}); err != nil {
				return err
			}
			if err := cs.AppendConversationItems(c, tenant, "sess_g"+tenant, []runner.ConversationItem{item(2), item(3)}); err != nil {
				return err
			}
		}
		_, err := cs.UpdateConversation(c, "t1", "sess_gt1", json.RawMessage(`{"k":"v"}`))
		return err
	})
	changed("delete a conversation item", func() error { return cs.DeleteConversationItem(c, "t1", "sess_gt1", "msg_03") }, "t1")
	changed("delete the first conversation item", func() error { return cs.DeleteConversationItem(c, "t2", "sess_gt2", "msg_00") }, "t2")
	changed("delete another tenant's conversation", func() error {
		if err := cs.DeleteConversation(c, "t1", "sess_gt2"); !errors.Is(err, runner.ErrNotFound) {
			return fmt.Errorf("deleting another tenant's conversation: %v, want ErrNotFound", err)
		}
		return nil
	})
	changed("delete a conversation", func() error { return cs.DeleteConversation(c, "t2", "sess_gt2") }, "t2")
}

// ResponseLink checks runner.ResponseLinker: the link of a stored,
// undeleted response of the tenant, what GetResponse and GetRun give of
// it, and ErrNotFound otherwise.
func ResponseLink(t *testing.T, open func(t *testing.T) runner.Store) {
	s := open(t)
	h, _ := s.(runner.HistoryStore)
	l, ok := s.(runner.ResponseLinker)
	if !ok || h == nil {
		t.Fatalf("%T does not implement runner.ResponseLinker and HistoryStore", s)
	}
	c := ctx(t)
	first := newRun("t1", runner.StatusRunning)
	first.SessionID, first.ThreadID = contract.OwnSessionID(first.ID), contract.OwnThreadID(first.ID)
	next := newRun("t1", runner.StatusRunning)
	next.SessionID, next.ThreadID = first.SessionID, first.ThreadID
	for i, r := range []*runner.Run{first, next} {
		if err := s.StartRun(c, r, false, false); err != nil {
			t.Fatal(err)
		}
		rec := runner.ResponseRecord{RunID: r.ID, TenantID: "t1", Echo: []byte(`{"k":1}`)}
		if i == 1 {
			rec.PreviousRunID = first.ID
		}
		if err := h.BeginResponse(c, rec, []runner.Item{{ID: "msg_in_" + r.ID, RunID: r.ID, Message: runner.Message{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		run  *runner.Run
		prev string
	}{{first, ""}, {next, first.ID}} {
		got, err := l.ResponseLink(c, "t1", tc.run.ID)
		want := runner.ResponseLink{PreviousRunID: tc.prev, SessionID: first.SessionID, ThreadID: first.ThreadID}
		if err != nil || got != want {
			t.Fatalf("ResponseLink(%s) = %+v, %v; want %+v", tc.run.ID, got, err, want)
		}
		rec, err := h.GetResponse(c, "t1", tc.run.ID)
		if err != nil || rec.PreviousRunID != got.PreviousRunID {
			t.Fatalf("GetResponse(%s) = %+v, %v; the link says %+v", tc.run.ID, rec, err, got)
		}
	}
	if _, err := l.ResponseLink(c, "t2", next.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ResponseLink of another tenant's response: %v, want ErrNotFound", err)
	}
	if _, err := l.ResponseLink(c, "t1", runner.NewID(contract.RunPrefix)); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ResponseLink of an unknown response: %v, want ErrNotFound", err)
	}
	plain := newRun("t1", runner.StatusRunning) // a run that is no response
	if err := s.StartRun(c, plain, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ResponseLink(c, "t1", plain.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ResponseLink of a run that is no response: %v, want ErrNotFound", err)
	}
	if err := h.DeleteResponse(c, "t1", next.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ResponseLink(c, "t1", next.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("ResponseLink of a deleted response: %v, want ErrNotFound", err)
	}
}
