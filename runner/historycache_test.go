package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// chainReads wraps a HistoryStore and counts whole-chain reads.
type chainReads struct {
	runner.HistoryStore
	n atomic.Int64
}

func (c *chainReads) Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) ([]runner.Item, error) {
	c.n.Add(1)
	return c.HistoryStore.Conversation(ctx, tenantID, runID, maxTurns, maxBytes)
}

// texts is the contents of msgs, one string.
func texts(msgs []runner.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s:%s|", m.Role, m.Content)
	}
	return b.String()
}

// TestReplayCacheAcrossHosts: a host keeps what it replayed of a
// previous_response_id chain, so a turn reads only the newest response
// from the store; and what another host sharing the store deletes or
// purges is never replayed from the cache: each turn's input is what a
// host with no cache replays from the store.
func TestReplayCacheAcrossHosts(t *testing.T) {
	a := newEnv(t)
	reads := &chainReads{HistoryStore: a.store}
	svcA := offlineService(t, runner.ServiceConfig{Store: a.store, History: reads})
	b := openEnv(t, a.path) // another host on the same store
	turn := func(svc *runner.Service, prev, say string) string { return finishedTurn(t, svc, prev, say) }
	// input is what svc gives the agent continuing prev.
	input := func(svc *runner.Service, tenant, prev string) (string, error) {
		t.Helper()
		in, release, err := svc.Input(t.Context(), tenant, "", runner.Request{
			Input: []runner.Message{{Role: "user", Content: "next"}}, PreviousResponseID: prev})
		release()
		return texts(in), err
	}
	// same checks that host A, whatever it keeps, gives what a host
	// that never replayed the chain reads from the store.
	same := func(prev string) string {
		t.Helper()
		want, err := input(offlineService(t, runner.ServiceConfig{Store: b.store}), "acme", prev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := input(svcA, "acme", prev)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("host A replays\n%s\nthe store holds\n%s", got, want)
		}
		return got
	}

	var ids []string
	prev := ""
	for i := range 6 {
		prev = turn(svcA, prev, fmt.Sprintf("say %d", i))
		ids = append(ids, prev)
	}
	before := reads.n.Load()
	prev = turn(svcA, prev, "say 6")
	ids = append(ids, prev)
	if n := reads.n.Load() - before; n != 0 {
		t.Errorf("a turn of a chain the host replayed before read the whole chain %d times, want 0", n)
	}
	if got := same(prev); !strings.Contains(got, "say 2") {
		t.Fatalf("the replay lacks an earlier turn: %s", got)
	}

	// Another host deletes a response in the middle of the chain: host A
	// no longer replays it, though it kept it.
	if err := b.store.DeleteResponse(t.Context(), "acme", mustRun(t, ids[2])); err != nil {
		t.Fatal(err)
	}
	if got := same(prev); strings.Contains(got, "say 2") {
		t.Fatalf("a deleted response is replayed: %s", got)
	}
	// The chain goes on without it, still correct turn after turn.
	prev = turn(svcA, prev, "say 7")
	prev = turn(svcA, prev, "say 8")
	if got := same(prev); strings.Contains(got, "say 2") || !strings.Contains(got, "say 7") {
		t.Fatalf("after a delete: %s", got)
	}

	// Retention on another host forgets every item: nothing is replayed.
	if _, err := b.store.PurgeBefore(t.Context(), 1<<40); err != nil {
		t.Fatal(err)
	}
	if got := same(prev); strings.Contains(got, "say") {
		t.Fatalf("purged items are replayed: %s", got)
	}

	// The last response deleted on another host, or another tenant's
	// continuation: not found, whatever host A keeps.
	last := turn(svcA, prev, "say 9")
	last = turn(svcA, last, "say 10")
	if _, err := input(svcA, "globex", last); !errors.Is(err, runner.ErrPreviousResponseNotFound) {
		t.Fatalf("another tenant continues the chain: %v", err)
	}
	if err := b.store.DeleteResponse(t.Context(), "acme", mustRun(t, last)); err != nil {
		t.Fatal(err)
	}
	if _, err := input(svcA, "acme", last); !errors.Is(err, runner.ErrPreviousResponseNotFound) {
		t.Fatalf("a deleted response is continued: %v", err)
	}
}

// TestReplayCacheForks: two turns continuing the same response each get
// their own history, and a caller changing what it was given changes
// nothing another turn gets.
func TestReplayCacheForks(t *testing.T) {
	e := newEnv(t)
	svc := e.svc
	run := func(prev, say string) (string, []runner.Message) {
		t.Helper()
		in, release, err := svc.Input(t.Context(), "acme", "", runner.Request{
			Input: []runner.Message{{Role: "user", Content: say}}, PreviousResponseID: prev})
		release()
		if err != nil {
			t.Fatal(err)
		}
		return finishedTurn(t, svc, prev, say), in
	}
	root, _ := run("", "root")
	mid, _ := run(root, "mid")
	_, left := run(mid, "left")
	left[0].Content = "changed by a caller"
	_ = append(left[:1], runner.Message{Role: "user", Content: "appended by a caller"})
	_, right := run(mid, "right")
	if got := texts(right); strings.Contains(got, "caller") || strings.Contains(got, "left") ||
		!strings.HasPrefix(got, "user:root|") || !strings.HasSuffix(got, "user:right|") {
		t.Fatalf("a fork's input: %s", got)
	}
	if n := len(slices.DeleteFunc(right, func(m runner.Message) bool { return m.Role != "user" })); n != 3 {
		t.Fatalf("a fork's input has %d user messages, want 3", n)
	}
}

func mustRun(t *testing.T, respID string) string {
	t.Helper()
	id, ok := contract.RunIDOf(respID)
	if !ok {
		t.Fatalf("not a response id: %s", respID)
	}
	return id
}

// convReads wraps a ConversationStore and counts the items it reads.
type convReads struct {
	runner.ConversationStore
	n atomic.Int64
}

func (c *convReads) ConversationItems(ctx context.Context, tenantID, sessionID, after string, limit int, desc bool) ([]runner.ConversationItem, bool, error) {
	items, more, err := c.ConversationStore.ConversationItems(ctx, tenantID, sessionID, after, limit, desc)
	c.n.Add(int64(len(items)))
	return items, more, err
}

// TestConversationCacheAcrossHosts: a host keeps what it read of a
// conversation and reads only the items added since; what another host
// sharing the store appends or deletes is read as the store has it.
func TestConversationCacheAcrossHosts(t *testing.T) {
	a := newEnv(t)
	reads := &convReads{ConversationStore: a.store}
	svcA := offlineService(t, runner.ServiceConfig{Store: a.store, Conversations: reads})
	b := openEnv(t, a.path)
	item := func(i int) runner.ConversationItem {
		id := fmt.Sprintf("msg_%03d", i)
		return runner.ConversationItem{ID: id, Data: []byte(fmt.Sprintf(`{"id":%q,"role":"user","content":"say %d"}`, id, i))}
	}
	var first []runner.ConversationItem
	for i := range 10 {
		first = append(first, item(i))
	}
	if err := b.store.CreateConversation(t.Context(), runner.Conversation{SessionID: "sess_c", TenantID: "acme", CreatedAt: 1, Metadata: []byte(`{}`)}, first); err != nil {
		t.Fatal(err)
	}
	// same checks that host A reads what the store holds.
	same := func() string {
		t.Helper()
		got, err := svcA.ReadConversation(t.Context(), "acme", "sess_c")
		want, werr := b.svc.ReadConversation(t.Context(), "acme", "sess_c")
		if !errors.Is(err, werr) && (err == nil || werr == nil) {
			t.Fatalf("host A: %v; the store: %v", err, werr)
		}
		var g, w []string
		for _, it := range got {
			g = append(g, string(it))
		}
		for _, it := range want {
			w = append(w, string(it))
		}
		if strings.Join(g, ",") != strings.Join(w, ",") {
			t.Fatalf("host A reads\n%s\nthe store holds\n%s", g, w)
		}
		return strings.Join(g, ",")
	}
	same()
	appendItems := func(items ...runner.ConversationItem) {
		t.Helper()
		if err := b.store.AppendConversationItems(t.Context(), "acme", "sess_c", items); err != nil {
			t.Fatal(err)
		}
	}
	appendItems(item(10), item(11))
	before := reads.n.Load()
	same()
	if n := reads.n.Load() - before; n != 2 {
		t.Errorf("host A read %d items for 2 new ones", n)
	}
	// Deleted on another host: in the middle, the last one read.
	if err := b.store.DeleteConversationItem(t.Context(), "acme", "sess_c", "msg_004"); err != nil {
		t.Fatal(err)
	}
	if got := same(); strings.Contains(got, "say 4") {
		t.Fatalf("a deleted item is read: %s", got)
	}
	if err := b.store.DeleteConversationItem(t.Context(), "acme", "sess_c", "msg_011"); err != nil {
		t.Fatal(err)
	}
	appendItems(item(12))
	if got := same(); strings.Contains(got, "say 11") || !strings.Contains(got, "say 12") {
		t.Fatalf("after deleting the last item read: %s", got)
	}
	// Another tenant, and the conversation deleted: not found.
	if _, err := svcA.ReadConversation(t.Context(), "globex", "sess_c"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("another tenant reads the conversation: %v", err)
	}
	if err := b.store.DeleteConversation(t.Context(), "acme", "sess_c"); err != nil {
		t.Fatal(err)
	}
	if _, err := svcA.ReadConversation(t.Context(), "acme", "sess_c"); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("a deleted conversation is read: %v", err)
	}
}

// TestReplayCacheBound: a host that keeps the chain refuses the turn that
// passes limits.history.max_history_bytes exactly when a host that reads
// it from the store does.
func TestReplayCacheBound(t *testing.T) {
	bounds := runner.HistoryBounds{MaxHistoryBytes: 3000}
	a := newEnv(t, withConfig(func(c *runner.ServiceConfig) { c.Bounds = bounds }))
	prev := ""
	for i := range 20 {
		say := fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 200))
		in, release, err := a.svc.Input(t.Context(), "acme", "", runner.Request{
			Input: []runner.Message{{Role: "user", Content: say}}, PreviousResponseID: prev})
		release()
		fresh := offlineService(t, runner.ServiceConfig{Store: a.store, Bounds: bounds})
		want, release2, werr := fresh.Input(t.Context(), "acme", "", runner.Request{
			Input: []runner.Message{{Role: "user", Content: say}}, PreviousResponseID: prev})
		release2()
		if (err == nil) != (werr == nil) || texts(in) != texts(want) {
			t.Fatalf("turn %d: the host that keeps the chain: %v, %d messages; from the store: %v, %d messages", i, err, len(in), werr, len(want))
		}
		if err != nil {
			var be *runner.BoundError
			if !errors.As(err, &be) || be.Param != "previous_response_id" || i < 3 {
				t.Fatalf("turn %d refused with %v", i, err)
			}
			return
		}
		prev = finishedTurn(t, a.svc, prev, say)
	}
	t.Fatal("the chain was never refused")
}

// TestReplayCacheLateOutput: a response continued while it still runs
// gains its output later (its end, one write); a host that replayed the
// chain before then replays the output once it is there, as the store
// has it, and so does a turn that continues the chain further.
func TestReplayCacheLateOutput(t *testing.T) {
	e := newEnv(t)
	b := openEnv(t, e.path) // another host on the same store
	input := func(svc *runner.Service, prev string) string { return nextInput(t, svc, prev) }
	start := func(prev, say string) (*runner.Handle, string) {
		t.Helper()
		sp := responseSpec(runner.Message{Role: "user", Content: say})
		sp.Request.PreviousResponseID = prev
		h, err := e.svc.Start(t.Context(), sp)
		if err != nil {
			t.Fatal(err)
		}
		return h, contract.ResponseID(h.Run().ID)
	}
	done := func(h *runner.Handle) {
		t.Helper()
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
	}
	h1, r1 := start("", "say 1")
	done(h1)
	h2, r2 := start(r1, "say 2")
	// Continued, on host A, while r2 runs: r2 has its input only.
	early := input(e.svc, r2)
	if !strings.Contains(early, "say 2") || strings.Count(early, "assistant:") != 1 {
		t.Fatalf("a running response's chain: %s", early)
	}
	done(h2)
	// Its output is there now: host A replays it, as a host that never
	// kept the chain does.
	if got, want := input(e.svc, r2), input(b.svc, r2); got != want || strings.Count(got, "assistant:") != 2 {
		t.Fatalf("after r2's end, host A replays\n%s\nthe store holds\n%s", got, want)
	}
	h3, r3 := start(r2, "say 3")
	done(h3)
	if got, want := input(e.svc, r3), input(b.svc, r3); got != want || strings.Count(got, "assistant:") != 3 {
		t.Fatalf("the next turn: host A replays\n%s\nthe store holds\n%s", got, want)
	}
}

// TestReplayCachePurgedElsewhere: retention on another host forgets the
// responses of a chain host A keeps whole: host A replays what the store
// holds, not what it kept.
func TestReplayCachePurgedElsewhere(t *testing.T) {
	a := newEnv(t)
	reads := &chainReads{HistoryStore: a.store}
	svcA := offlineService(t, runner.ServiceConfig{Store: a.store, History: reads})
	b := openEnv(t, a.path)
	input := func(svc *runner.Service, prev string) string { return nextInput(t, svc, prev) }
	prev := ""
	for i := range 4 {
		prev = finishedTurn(t, svcA, prev, fmt.Sprintf("say %d", i))
	}
	before := reads.n.Load()
	if got := input(svcA, prev); !strings.Contains(got, "say 0") || reads.n.Load() != before {
		t.Fatalf("host A does not keep the chain (%d whole reads): %s", reads.n.Load()-before, got)
	}
	if _, err := b.store.PurgeBefore(t.Context(), 1<<40); err != nil {
		t.Fatal(err)
	}
	if got, want := input(svcA, prev), input(b.svc, prev); got != want || strings.Contains(got, "say") {
		t.Fatalf("after a purge on another host, host A replays\n%s\nthe store holds\n%s", got, want)
	}
}

// nextInput is the agent's input, as texts, for a turn of tenant acme
// that says "next" after the response prev, as svc builds it.
func nextInput(t *testing.T, svc *runner.Service, prev string) string {
	t.Helper()
	in, release, err := svc.Input(t.Context(), "acme", "", runner.Request{
		Input: []runner.Message{{Role: "user", Content: "next"}}, PreviousResponseID: prev})
	release()
	if err != nil {
		t.Fatal(err)
	}
	return texts(in)
}

// offlineService is a service over cfg's stores with the offline agent,
// as another host (or the same host anew) builds it.
func offlineService(t *testing.T, cfg runner.ServiceConfig) *runner.Service {
	t.Helper()
	cfg.Agent = agent.New(offline.New(offline.Config{}))
	svc, err := runner.NewService(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// finishedTurn runs a turn of tenant acme that says say after the
// response prev on svc, to its end, and returns its response id.
func finishedTurn(t *testing.T, svc *runner.Service, prev, say string) string {
	t.Helper()
	sp := responseSpec(runner.Message{Role: "user", Content: say})
	sp.Request.PreviousResponseID = prev
	h, err := svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	return contract.ResponseID(h.Run().ID)
}
