package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// readCount wraps a HistoryStore and counts item reads by id.
type readCount struct {
	runner.HistoryStore
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCount) GetItem(ctx context.Context, tenantID, id string) (runner.Item, error) {
	c.mu.Lock()
	c.reads[id]++
	c.mu.Unlock()
	return c.HistoryStore.GetItem(ctx, tenantID, id)
}

func (c *readCount) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.reads {
		n += v
	}
	return n
}

func responseSpec(input ...runner.Message) runner.StartSpec {
	sp := spec("", false)
	sp.Endpoint = "responses"
	sp.Request.Input = input
	return sp
}

func ref(id string, i int) runner.Message { return runner.Message{Ref: id, RefIndex: i} }

// TestReferencesResolvedOnceAndStoredAsReferences: every distinct id of a
// request is read from the store once however often it is referenced;
// the stored input keeps the references (naming the item they finally
// stand for), not copies of what they resolve to; and the bounds on their
// count and resolved bytes end in a BoundError naming the field.
func TestReferencesResolvedOnceAndStoredAsReferences(t *testing.T) {
	e := newEnv(t)
	reads := &readCount{HistoryStore: e.store, reads: map[string]int{}}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: e.store, History: reads,
		Agent:  agent.New(offline.New(offline.Config{})),
		Bounds: runner.HistoryBounds{MaxReferences: 64, MaxReferenceBytes: 48 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	start := func(sp runner.StartSpec) (runner.Run, error) {
		t.Helper()
		h, err := svc.Start(t.Context(), sp)
		if err != nil {
			return runner.Run{}, err
		}
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
		return h.Run(), nil
	}
	first, err := start(responseSpec(runner.Message{Role: "user", Content: strings.Repeat("a", 1000)}))
	if err != nil {
		t.Fatal(err)
	}
	out := contract.MessageID(first.ID)
	items, _ := e.store.ResponseItems(t.Context(), first.ID)
	in := items[0].ID

	// 40 references to two items: two reads, 40 references stored.
	var refs []runner.Message
	for i := range 40 {
		refs = append(refs, ref([]string{out, in}[i%2], i))
	}
	second, err := start(responseSpec(refs...))
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.total(); n != 2 {
		t.Errorf("40 references to 2 items read the store %d times, want 2", n)
	}
	stored, err := e.store.ResponseItems(t.Context(), second.ID)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, it := range stored {
		if !it.Output {
			size += len(it.Message.Content)
			if it.Message.Ref == "" {
				t.Errorf("stored input item %s is a copy, not a reference", it.ID)
			}
		}
	}
	if size != 0 {
		t.Errorf("the stored input holds %d bytes of copied text", size)
	}

	// A reference to a stored reference names the item it stands for:
	// stored once more as that item, resolved in one step.
	third, err := start(responseSpec(ref(stored[0].ID, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := e.store.ResponseItems(t.Context(), third.ID); len(st) == 0 || st[0].Message.Ref != out {
		t.Errorf("a reference to a reference is stored as %+v, want a reference to %s", st, out)
	}

	// Continuing the second response replays its stored references,
	// resolved, and what they resolve to counts against the history
	// budget: 40 KB of resolved references pass 30 KiB.
	next := responseSpec(runner.Message{Role: "user", Content: "next"})
	next.Request.PreviousResponseID = "resp_" + strings.TrimPrefix(second.ID, "run_")
	if _, err := start(next); err != nil {
		t.Fatalf("continuing a response of references: %v", err)
	}
	tight, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: e.store,
		Agent: agent.New(offline.New(offline.Config{})), Bounds: runner.HistoryBounds{MaxHistoryBytes: 30 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	var be *runner.BoundError
	if _, err := tight.Start(t.Context(), next); !errors.As(err, &be) || be.Param != "previous_response_id" {
		t.Errorf("replayed references past the history budget: %v, want a BoundError on previous_response_id", err)
	}

	_, err = start(responseSpec(make65(out)...))
	if !errors.As(err, &be) || be.Param != "input" || !errors.Is(err, runner.ErrInvalidRequest) {
		t.Errorf("65 references: %v, want a BoundError on input", err)
	}
	// 60 references of about 1 KB each: past a 48 KiB budget, though
	// only two items are read.
	var many []runner.Message
	for i := range 60 {
		many = append(many, ref([]string{out, in}[i%2], i))
	}
	_, err = start(responseSpec(many...))
	if !errors.As(err, &be) || !strings.HasPrefix(be.Param, "input[4") {
		t.Errorf("60 KB of references past a 48 KiB budget: %v, want a BoundError on input[4x]", err)
	}
}

func make65(id string) []runner.Message {
	out := make([]runner.Message, 65)
	for i := range out {
		out[i] = ref(id, i)
	}
	return out
}
