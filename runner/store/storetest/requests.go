package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

// SharedRequests checks that a store keeps a recorded request that begins
// with what an earlier run of its tenant recorded by reference
// (RATIONALE.md "Agent-sized bodies") and that nobody can tell: every
// run's request reads back byte for byte through GetRun, ListRuns and a
// lease's takeover; a turn that resends its history stores only what it
// adds, and at least one request in itemref's chain bound is stored
// whole; tenants never share; a purge of a base that a younger run still
// references leaves the younger run's request whole. ownBytes(s, runID)
// is how many bytes the store keeps of run runID's request itself.
func SharedRequests(t *testing.T, open func(t *testing.T) runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int)
	}{
		{"ResentHistoryReadsBack", testSharedReadsBack},
		{"NoSharingAcrossTenants", testSharedNotAcrossTenants},
		{"PurgeKeepsReferrers", testSharedPurge},
		{"EditedHistory", testSharedEdited},
		{"FarBase", testSharedFarBase},
		{"SmallRequestsWhole", testSharedSmall},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t), ownBytes) })
	}
}

// chainBound is itemref.RequestDepth, which storetest cannot import: a
// request is read from at most this many rows.
const chainBound = 16

// agentSession plays a client that resends its history every turn, as a
// chat completion: the run's recorded request is `{"input":[...]` with
// every message so far, and the bounds the runner gives it.
type agentSession struct {
	t      *testing.T
	s      runner.Store
	tenant string
	msgs   [][]byte
	runs   []runner.Run // as started, Request whole
}

// agentMessage is a stored message of about 600 bytes, with the escapes
// such text has.
func agentMessage(tenant string, i int) []byte {
	role := "user"
	if i%2 == 1 {
		role = "assistant"
	}
	b, _ := json.Marshal(runner.Message{Role: role, Content: fmt.Sprintf("%s turn %d: in \"handler.go\"\n\t%s", tenant, i,
		strings.Repeat("the reply should set its content type é; ", 13))})
	return b
}

func newAgentSession(t *testing.T, s runner.Store, tenant string, history int) *agentSession {
	a := &agentSession{t: t, s: s, tenant: tenant}
	for i := range history {
		a.msgs = append(a.msgs, agentMessage(tenant, i))
	}
	return a
}

// request is the recorded request of msgs and its bounds.
func agentRequest(msgs [][]byte, tail string) ([]byte, []int) {
	b := []byte(`{"input":[`)
	bounds := make([]int, 0, len(msgs))
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
		bounds = append(bounds, len(b))
	}
	return append(b, `],"stream":false`+tail+`}`...), bounds
}

// turn adds n messages and starts a run with everything so far.
func (a *agentSession) turn(n int, edit func(*runner.Run)) runner.Run {
	a.t.Helper()
	for range n {
		a.msgs = append(a.msgs, agentMessage(a.tenant, len(a.msgs)))
	}
	return a.start(a.msgs, edit)
}

func (a *agentSession) start(msgs [][]byte, edit func(*runner.Run)) runner.Run {
	a.t.Helper()
	r := newRun(a.tenant, runner.StatusRunning)
	r.Request, r.RequestBounds = agentRequest(msgs, fmt.Sprintf(`,"max_output_tokens":%d`, len(a.runs)+1))
	if edit != nil {
		edit(r)
	}
	want := *r
	if err := a.s.StartRun(ctx(a.t), r, false, false); err != nil {
		a.t.Fatalf("StartRun: %v", err)
	}
	a.runs = append(a.runs, want)
	return want
}

// check reads every run back, one by one and listed, and compares its
// request byte for byte.
func (a *agentSession) check(want map[string][]byte) {
	a.t.Helper()
	for _, r := range a.runs {
		w, ok := want[r.ID]
		if !ok {
			w = r.Request
		}
		got := mustGet(a.t, a.s, r.ID)
		if !bytes.Equal(got.Request, w) {
			a.t.Fatalf("GetRun(%s).Request: %d bytes, want %d (differs at %d)", r.ID, len(got.Request), len(w), firstDiff(got.Request, w))
		}
		got, err := a.s.GetRun(ctx(a.t), a.tenant, r.ID)
		if err != nil || !bytes.Equal(got.Request, w) {
			a.t.Fatalf("GetRun(%s, %s): %d bytes (%v), want %d", a.tenant, r.ID, len(got.Request), err, len(w))
		}
	}
	listed, _, err := a.s.ListRuns(ctx(a.t), runner.ListQuery{TenantID: a.tenant, Limit: 100})
	if err != nil {
		a.t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, r := range listed {
		byID[r.ID] = r.Request
	}
	for _, r := range a.runs {
		w, ok := want[r.ID]
		if !ok {
			w = r.Request
		}
		if got, ok := byID[r.ID]; !ok || !bytes.Equal(got, w) {
			a.t.Fatalf("ListRuns: run %s's request %d bytes (listed %v), want %d", r.ID, len(got), ok, len(w))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A session of 2×chainBound+4 turns over a 30-message history (18 KB),
// each adding a reply and a user message: every request reads back, each
// turn stores little more than it adds, and every chainBound turns one
// at least is stored whole. Ended runs and a lease's takeover read back
// too.
func testSharedReadsBack(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 30)
	whole := 0
	sinceWhole := 0
	for i := range 2*chainBound + 4 {
		var r runner.Run
		if i == 0 {
			r = a.start(a.msgs, nil)
		} else {
			r = a.turn(2, func(r *runner.Run) {
				if i == 5 { // a background run whose lease runs out
					r.HostID, r.LeaseToken, r.LeaseExpiresAt = "host-gone", 1, 1000
				}
			})
		}
		own := ownBytes(t, s, r.ID)
		added := len(r.Request) - r.RequestBounds[len(r.RequestBounds)-3]
		switch {
		case own >= len(r.Request):
			whole++
			sinceWhole = 0
		case own > added+64:
			t.Fatalf("turn %d stores %d bytes of its %d-byte request, adding %d", i, own, len(r.Request), added)
		default:
			sinceWhole++
		}
		if sinceWhole >= chainBound {
			t.Fatalf("turn %d: %d requests in a row kept by reference, the chain's bound is %d", i, sinceWhole, chainBound)
		}
		if i%3 == 0 {
			end := int64(1_700_000_100 + i)
			if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, Output: "done", EndedAt: &end}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if whole < 2 || whole > 4 {
		t.Fatalf("%d of %d requests stored whole, want 2 to 4 (the first, then one per %d)", whole, len(a.runs), chainBound)
	}
	a.check(nil)
	if l, ok := s.(runner.LeaseStore); ok {
		taken, err := l.AcquireExpired(ctx(t), runner.LeaseClaim{HostID: "host-b", Now: 2000, Until: 12_000})
		if err != nil {
			t.Fatal(err)
		}
		if len(taken) != 1 || taken[0].ID != a.runs[5].ID || !bytes.Equal(taken[0].Request, a.runs[5].Request) {
			t.Fatalf("AcquireExpired took %d runs, want run 5 with its %d-byte request byte for byte", len(taken), len(a.runs[5].Request))
		}
	}
}

// Two tenants send the same history: the second stores its request whole
// and reads back its own; neither reads the other's run.
func testSharedNotAcrossTenants(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 30)
	a.start(a.msgs, nil)
	b := &agentSession{t: t, s: s, tenant: "t2", msgs: append([][]byte{}, a.msgs...)}
	rb := b.start(a.msgs, nil)
	if own := ownBytes(t, s, rb.ID); own < len(rb.Request) {
		t.Fatalf("tenant t2's request stores %d of its %d bytes: it shares tenant t1's", own, len(rb.Request))
	}
	ra := a.turn(2, nil)
	if own := ownBytes(t, s, ra.ID); own >= len(ra.Request) {
		t.Fatalf("tenant t1's second turn stores %d of %d bytes: it shares nothing", own, len(ra.Request))
	}
	rb2 := b.turn(2, nil)
	a.check(nil)
	b.check(nil)
	if _, err := s.GetRun(ctx(t), "t2", ra.ID); err == nil {
		t.Fatal("tenant t2 reads tenant t1's run")
	}
	if own := ownBytes(t, s, rb2.ID); own >= len(rb2.Request) {
		t.Fatalf("tenant t2's second turn stores %d of %d bytes: it shares nothing with its own first", own, len(rb2.Request))
	}
}

// A purge of runs that younger runs are based on forgets the old runs'
// requests and leaves the younger ones' whole; the younger ones' own
// purge forgets them too.
func testSharedPurge(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 30)
	for i := range 8 {
		var r runner.Run
		if i == 0 {
			r = a.start(a.msgs, nil)
		} else {
			r = a.turn(2, nil)
		}
		end := after(100) // the first four end long ago
		if i >= 4 {
			end = after(300)
		}
		if i != 7 { // the last one is still running
			if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, Output: "done", EndedAt: &end}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if own := ownBytes(t, s, a.runs[4].ID); own >= len(a.runs[4].Request) {
		t.Fatalf("turn 4 stores %d of %d bytes: the test needs it based on turn 3", own, len(a.runs[4].Request))
	}
	if _, err := s.PurgeBefore(ctx(t), after(200)); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, r := range a.runs[:4] {
		want[r.ID] = nil
	}
	a.check(want)
	// What is left goes on sharing.
	r := a.turn(2, nil)
	if own := ownBytes(t, s, r.ID); own >= len(r.Request) {
		t.Fatalf("a turn after the purge stores %d of %d bytes: it shares nothing", own, len(r.Request))
	}
	a.check(want)
	end := after(300)
	for _, r := range a.runs[7:] {
		if err := s.Transition(ctx(t), r.ID, runner.Transition{Status: runner.StatusCompleted, Output: "done", EndedAt: &end}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PurgeBefore(ctx(t), after(400)); err != nil {
		t.Fatal(err)
	}
	for _, r := range a.runs {
		want[r.ID] = nil
		if own := ownBytes(t, s, r.ID); own != 0 {
			t.Fatalf("run %s keeps %d bytes of its request after its purge", r.ID, own)
		}
	}
	a.check(want)
}

// A client that edits an early message shares nothing with the history
// before the edit (only a run's whole input prefix is indexed), and its
// next turn shares the edited history.
func testSharedEdited(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 40)
	a.start(a.msgs, nil)
	a.msgs[20] = agentMessage("edited", 20)
	r := a.start(a.msgs, nil)
	if own := ownBytes(t, s, r.ID); own < len(r.Request) {
		t.Fatalf("an edited history stores %d of its %d bytes: it shares a prefix it does not have", own, len(r.Request))
	}
	r = a.turn(2, nil)
	if own := ownBytes(t, s, r.ID); own >= len(r.Request) {
		t.Fatalf("the turn after the edit stores %d of %d bytes: it shares nothing", own, len(r.Request))
	}
	a.check(nil)
}

// A turn that adds more messages than a store looks up first (SQLite
// asks for its few longest prefixes, then the rest: nearHashes) still
// finds its base, and keeps what the history shares once; one that adds
// a few finds it too.
func testSharedFarBase(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 40)
	a.start(a.msgs, nil)
	for _, n := range []int{9, 1, 30} {
		r := a.turn(n, nil)
		added := len(r.Request) - r.RequestBounds[len(r.RequestBounds)-1-n]
		if own := ownBytes(t, s, r.ID); own > added+64 {
			t.Fatalf("a turn adding %d messages stores %d bytes of its %d-byte request, adding %d", n, own, len(r.Request), added)
		}
	}
	a.check(nil)
}

// Requests under the size that pays a lookup are stored as they were.
func testSharedSmall(t *testing.T, s runner.Store, ownBytes func(t *testing.T, s runner.Store, runID string) int) {
	a := newAgentSession(t, s, "t1", 3)
	a.start(a.msgs, nil)
	r := a.turn(2, nil)
	if own := ownBytes(t, s, r.ID); own != len(r.Request) {
		t.Fatalf("a %d-byte request stores %d bytes", len(r.Request), own)
	}
	a.check(nil)
}
