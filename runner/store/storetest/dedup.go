package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Dedup checks that a history store keeps each item once (RATIONALE.md
// "Each item stored once") and that nobody can tell: a client that
// resends its history every turn reads back exactly what it stored
// (items, their ids, the run's recorded request, the previous_response_id
// chain, one item by id); a response never shares another tenant's
// items; deleting or purging a response removes what only it held and
// keeps what a later response shares; deleting a conversation removes
// its items only. ownRows(s, runID) counts the item rows a store keeps
// for run runID itself: a turn that resends its history must add only
// the items it adds.
func Dedup(t *testing.T, open func(t *testing.T) runner.Store, ownRows func(t *testing.T, s runner.Store, runID string) int) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s runner.Store, ownRows func(t *testing.T, s runner.Store, runID string) int)
	}{
		{"ResentHistoryReadsBack", testResentHistoryReadsBack},
		{"NoSharingAcrossTenants", testNoSharingAcrossTenants},
		{"DeleteKeepsWhatOthersShare", testDeleteKeepsShared},
		{"PurgeForgetsOldInput", testPurgeForgetsShared},
		{"BaseDeletedDuringWrite", testBaseDeletedDuringWrite},
		{"AnswerResentInAnotherForm", testAnswerResentInAnotherForm},
		{"DeleteConversationKeepsOthers", testDeleteConversationKeepsOthers},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t), ownRows) })
	}
}

// session plays a client that keeps its own history: each turn sends
// everything said so far and one new user message, with store:true.
type session struct {
	t       *testing.T
	s       runner.Store
	h       runner.HistoryStore
	tenant  string
	history []runner.Message
	// turns are the runs, in order, with what each was given and said.
	turns []turnRecord
	// resend, when set, is the answer as the client puts it back into
	// its history (nil: as stored).
	resend func(runner.Message) runner.Message
}

type turnRecord struct {
	run     runner.Run
	request []byte
	input   []runner.Item
	output  []runner.Item
}

func newSession(t *testing.T, s runner.Store, tenant string) *session {
	h, ok := s.(runner.HistoryStore)
	if !ok {
		t.Fatalf("%T does not implement runner.HistoryStore", s)
	}
	return &session{t: t, s: s, h: h, tenant: tenant}
}

// long makes a message of a few hundred bytes, with characters JSON
// escapes and characters of several UTF-8 bytes.
func long(tag string) string {
	return tag + ": " + strings.Repeat("ça <va> & \"bien\" — ", 16)
}

// turn runs one turn: the history and user, answered with answer. The
// run row comes first (StartRun, its request the whole input), joined
// with the response's first write when the store can; joined says
// whether to try.
func (ss *session) turn(user, answer string, joined bool) turnRecord {
	return ss.turnWith(user, answer, joined, nil)
}

// turnWith is turn, calling between (when not nil) after the response's
// first write was prepared (JoinBegin) and before the run's write.
func (ss *session) turnWith(user, answer string, joined bool, between func()) turnRecord {
	t := ss.t
	t.Helper()
	c := t.Context()
	ss.history = append(ss.history, runner.Message{Role: "user", Content: long(user)})
	in := append([]runner.Message(nil), ss.history...)
	r := newRun(ss.tenant, runner.StatusRunning)
	r.Endpoint = contract.EndpointResponses
	r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
	req, err := json.Marshal(runner.Request{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	r.Request = req
	input := make([]runner.Item, len(in))
	for i, m := range in {
		input[i] = runner.Item{ID: runner.InputItemID(r.ID, i, m.Role), RunID: r.ID, Message: m}
	}
	rec := runner.ResponseRecord{RunID: r.ID, TenantID: ss.tenant, Echo: []byte(`{"k":1}`)}
	rctx, begun := c, runner.NotJoined
	if j, ok := ss.s.(runner.HistoryJoiner); ok && joined {
		rctx, begun = j.JoinBegin(c, rec, input)
	}
	if between != nil {
		between()
	}
	if err := ss.s.StartRun(rctx, r, false, false); err != nil {
		t.Fatal(err)
	}
	if !begun() {
		if err := ss.h.BeginResponse(c, rec, input); err != nil {
			t.Fatal(err)
		}
	}
	out := runner.Message{Role: "assistant", Content: long(answer)}
	output := []runner.Item{{ID: contract.MessageID(r.ID), RunID: r.ID, Output: true, Message: out}}
	if err := ss.h.EndResponse(c, r.ID, []byte(`{"id":"`+contract.ResponseID(r.ID)+`"}`), output); err != nil {
		t.Fatal(err)
	}
	ss.history = append(ss.history, out)
	if ss.resend != nil {
		ss.history[len(ss.history)-1] = ss.resend(out)
	}
	tr := turnRecord{run: *r, request: req, input: input, output: output}
	ss.turns = append(ss.turns, tr)
	return tr
}

// readsBack checks that everything of turn tr reads as it was stored.
func (ss *session) readsBack(tr turnRecord) {
	t := ss.t
	t.Helper()
	c := t.Context()
	items, err := ss.h.ResponseItems(c, tr.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]runner.Item(nil), tr.input...), tr.output...)
	if !reflect.DeepEqual(items, want) {
		t.Fatalf("items of %s read back as\n%+v\nwant\n%+v", tr.run.ID, items, want)
	}
	got, err := ss.s.GetRun(c, ss.tenant, tr.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Request, tr.request) {
		t.Fatalf("request of %s reads back as\n%s\nwant\n%s", tr.run.ID, got.Request, tr.request)
	}
	for _, it := range want {
		one, err := ss.h.GetItem(c, ss.tenant, it.ID)
		if err != nil || !reflect.DeepEqual(one, it) {
			t.Fatalf("GetItem(%s) = %+v, %v; want %+v", it.ID, one, err, it)
		}
	}
}

func testResentHistoryReadsBack(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	ss := newSession(t, s, "t1")
	for i, u := range []string{"u1", "u2", "u3", "u4"} {
		// Every other turn joins its run's write, the others follow it.
		tr := ss.turn(u, "a"+u, i%2 == 0)
		ss.readsBack(tr)
	}
	for _, tr := range ss.turns {
		ss.readsBack(tr)
	}
	// From the second turn on, a turn keeps only its new message and its
	// answer: the rest it shares.
	for i, tr := range ss.turns[1:] {
		if n := ownRows(t, s, tr.run.ID); n != 2 {
			t.Errorf("turn %d keeps %d item rows of its own, want 2 (its new message and answer)", i+2, n)
		}
	}
	// A previous_response_id chain through such turns reads each one's
	// items whole.
	h := ss.h
	c := t.Context()
	last := ss.turns[len(ss.turns)-1]
	next := newRun("t1", runner.StatusRunning)
	if err := s.StartRun(c, next, false, false); err != nil {
		t.Fatal(err)
	}
	in := []runner.Item{{ID: runner.InputItemID(next.ID, 0, "user"), RunID: next.ID, Message: runner.Message{Role: "user", Content: "more"}}}
	if err := h.BeginResponse(c, runner.ResponseRecord{RunID: next.ID, TenantID: "t1", PreviousRunID: last.run.ID}, in); err != nil {
		t.Fatal(err)
	}
	conv, err := h.Conversation(c, "t1", next.ID, runner.MaxTurns, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]runner.Item(nil), last.input...), last.output...), in...)
	if !reflect.DeepEqual(conv, want) {
		t.Fatalf("conversation reads back as\n%+v\nwant\n%+v", conv, want)
	}
	if _, err := h.Conversation(c, "t1", next.ID, runner.MaxTurns, 2*len(long("u1"))); !errors.Is(err, runner.ErrHistoryTooLarge) {
		t.Fatalf("conversation past its byte bound: %v, want ErrHistoryTooLarge", err)
	}
}

func testNoSharingAcrossTenants(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	a, b := newSession(t, s, "t1"), newSession(t, s, "t2")
	for _, u := range []string{"u1", "u2", "u3"} {
		a.turn(u, "a"+u, true)
		b.turn(u, "a"+u, true)
	}
	c := t.Context()
	// The same content, two tenants: neither reads the other's items, by
	// their ids or through a response.
	for _, pair := range [][2]*session{{a, b}, {b, a}} {
		own, other := pair[0], pair[1]
		for _, tr := range own.turns {
			for _, it := range append(append([]runner.Item(nil), tr.input...), tr.output...) {
				if _, err := other.h.GetItem(c, other.tenant, it.ID); !errors.Is(err, runner.ErrNotFound) {
					t.Fatalf("tenant %s reads %s's item %s: %v", other.tenant, own.tenant, it.ID, err)
				}
			}
			if items, err := other.h.Conversation(c, other.tenant, tr.run.ID, runner.MaxTurns, 0); err != nil || len(items) != 0 {
				t.Fatalf("tenant %s reads %s's response %s: %d items, %v", other.tenant, own.tenant, tr.run.ID, len(items), err)
			}
		}
	}
	// Deleting one tenant's responses leaves the other's whole: nothing
	// of it was the first tenant's.
	for _, tr := range a.turns {
		if err := a.h.DeleteResponse(c, "t1", tr.run.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range b.turns {
		b.readsBack(tr)
	}
	for _, tr := range a.turns {
		if n := ownRows(t, s, tr.run.ID); n != 0 {
			t.Errorf("deleted response %s keeps %d item rows", tr.run.ID, n)
		}
	}
}

func testDeleteKeepsShared(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	ss := newSession(t, s, "t1")
	first := ss.turn("u1", "a1", true)
	second := ss.turn("u2", "a2", true)
	third := ss.turn("u3", "a3", true)
	c := t.Context()
	h := ss.h
	// Deleting the first and second turns: the third still reads whole,
	// but they are gone for every read of them.
	p, _ := s.(runner.HistoryProbe)
	for _, tr := range []turnRecord{first, second} {
		var gen int64
		if p != nil {
			gen, _ = p.ForgetGeneration(c, "t1")
		}
		if err := h.DeleteResponse(c, "t1", tr.run.ID); err != nil {
			t.Fatal(err)
		}
		// The rows stay for the third turn, but a host that kept the
		// deleted one's chain must see that it changed.
		if p != nil {
			if g, err := p.ForgetGeneration(c, "t1"); err != nil || g == gen {
				t.Fatalf("deleting %s, whose rows the third shares, left the forget generation at %d (%v)", tr.run.ID, g, err)
			}
		}
		if items, err := h.ResponseItems(c, tr.run.ID); err != nil || len(items) != 0 {
			t.Fatalf("deleted response %s still has %d items, %v", tr.run.ID, len(items), err)
		}
		for _, it := range append(append([]runner.Item(nil), tr.input...), tr.output...) {
			if _, err := h.GetItem(c, "t1", it.ID); !errors.Is(err, runner.ErrNotFound) {
				t.Fatalf("item %s of deleted response %s: %v", it.ID, tr.run.ID, err)
			}
		}
		if r, err := s.GetRun(c, "t1", tr.run.ID); err != nil || r.Request != nil {
			t.Fatalf("deleted response %s keeps its request %q, %v", tr.run.ID, r.Request, err)
		}
	}
	ss.readsBack(third)
	if n := ownRows(t, s, first.run.ID) + ownRows(t, s, second.run.ID); n == 0 {
		t.Fatalf("the rows the third turn shares were deleted with the turns that held them")
	}
	// Deleting the last one that shares them removes them all.
	if err := h.DeleteResponse(c, "t1", third.run.ID); err != nil {
		t.Fatal(err)
	}
	for _, tr := range ss.turns {
		if n := ownRows(t, s, tr.run.ID); n != 0 {
			t.Errorf("response %s keeps %d item rows after every response was deleted", tr.run.ID, n)
		}
	}
}

func testPurgeForgetsShared(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	ss := newSession(t, s, "t1")
	old := ss.turn("u1", "a1", true)
	newer := ss.turn("u2", "a2", true)
	c := t.Context()
	end := func(id string, at int64) {
		if err := s.Transition(c, id, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(at)}); err != nil {
			t.Fatal(err)
		}
	}
	end(old.run.ID, after(100))
	end(newer.run.ID, after(300))
	if _, err := s.PurgeBefore(c, after(200)); err != nil {
		t.Fatal(err)
	}
	// The old turn's input is forgotten: its items, its request.
	if items, err := ss.h.ResponseItems(c, old.run.ID); err != nil || len(items) != 0 {
		t.Fatalf("purged response has %d items, %v", len(items), err)
	}
	for _, it := range append(append([]runner.Item(nil), old.input...), old.output...) {
		if _, err := ss.h.GetItem(c, "t1", it.ID); !errors.Is(err, runner.ErrNotFound) {
			t.Fatalf("item %s of a purged response: %v", it.ID, err)
		}
	}
	if r, _ := s.GetRun(c, "t1", old.run.ID); r.Request != nil {
		t.Fatalf("purged run keeps its request %q", r.Request)
	}
	// The newer turn, which repeated it, still reads whole.
	ss.readsBack(newer)
	if _, err := s.PurgeBefore(c, after(400)); err != nil {
		t.Fatal(err)
	}
	for _, tr := range ss.turns {
		if n := ownRows(t, s, tr.run.ID); n != 0 {
			t.Errorf("response %s keeps %d item rows after both were purged", tr.run.ID, n)
		}
	}
}

func testDeleteConversationKeepsOthers(t *testing.T, s runner.Store, _ func(*testing.T, runner.Store, string) int) {
	cs, ok := s.(runner.ConversationStore)
	if !ok {
		t.Fatalf("%T does not implement runner.ConversationStore", s)
	}
	c := t.Context()
	data := json.RawMessage(`{"type":"message","role":"user","content":"` + strings.Repeat("same words ", 40) + `"}`)
	items := []runner.ConversationItem{{ID: "msg_1", Data: data}, {ID: "msg_2", Data: data}}
	for _, sess := range []string{"sess_a", "sess_b"} {
		if err := cs.CreateConversation(c, runner.Conversation{SessionID: sess, TenantID: "t1", CreatedAt: 1}, items); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.DeleteConversation(c, "t1", "sess_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetConversationItem(c, "t1", "sess_a", "msg_1"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("item of a deleted conversation: %v", err)
	}
	got, _, err := cs.ConversationItems(c, "t1", "sess_b", "", 10, false)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0].Data, data) || !bytes.Equal(got[1].Data, data) {
		t.Fatalf("the other conversation's items: %+v, %v", got, err)
	}
}

// A response deleted after a new turn found it as its base, and before
// the turn's write, is not that turn's base: the turn keeps its items
// itself and reads back whole.
func testBaseDeletedDuringWrite(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	ss := newSession(t, s, "t1")
	first := ss.turn("u1", "a1", true)
	second := ss.turnWith("u2", "a2", true, func() {
		if err := ss.h.DeleteResponse(t.Context(), "t1", first.run.ID); err != nil {
			t.Fatal(err)
		}
	})
	ss.readsBack(second)
	if n := ownRows(t, s, first.run.ID); n != 0 {
		t.Errorf("the deleted response keeps %d item rows", n)
	}
}

// A client whose resent answers are not the stored output messages byte
// for byte still shares the input before each: a turn keeps the answer as
// resent, its new message and its own answer.
func testAnswerResentInAnotherForm(t *testing.T, s runner.Store, ownRows func(*testing.T, runner.Store, string) int) {
	ss := newSession(t, s, "t1")
	ss.resend = func(m runner.Message) runner.Message {
		m.Content += " (as the client keeps it)"
		return m
	}
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		ss.turn(u, "a"+u, true)
	}
	for _, tr := range ss.turns {
		ss.readsBack(tr)
	}
	for i, tr := range ss.turns[2:] {
		if n := ownRows(t, s, tr.run.ID); n != 3 {
			t.Errorf("turn %d keeps %d item rows of its own, want 3 (the answer as resent, its new message, its answer)", i+3, n)
		}
	}
}
