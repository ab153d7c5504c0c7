package runner_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// goid is the calling goroutine's id, from its stack's first line.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	n, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return n
}

// goroutineProvider is the offline provider noting the goroutine each
// call runs on; inProcess says whether it says it answers in process.
type goroutineProvider struct {
	*offline.Provider
	inProcess bool
	ran       chan uint64
}

func (p *goroutineProvider) InProcess() bool { return p.inProcess }

func (p *goroutineProvider) Generate(ctx context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	p.ran <- goid()
	return p.Provider.Generate(ctx, req, emit)
}

// A run whose owner waits for the whole answer, with a provider that
// answers in process and nothing for the agent to validate, runs on the
// owner's goroutine when the owner waits; a streamed one, one with an
// output schema, a background one, or one whose provider calls out runs on
// a worker as before.
func TestInlineRunsOnTheOwnersGoroutine(t *testing.T) {
	schemaSpec := spec("hello", false)
	schemaSpec.Request.OutputSchema = []byte(`{"type":"object"}`)
	background := spec("hello", false)
	background.Request.Background = true
	for _, tc := range []struct {
		name      string
		spec      runner.StartSpec
		inProcess bool
		inline    bool
	}{
		{"whole", spec("hello", false), true, true},
		{"stream", spec("hello", true), true, false},
		{"schema", schemaSpec, true, false},
		{"background", background, true, false},
		{"network", spec("hello", false), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &goroutineProvider{Provider: offline.New(offline.Config{}), inProcess: tc.inProcess, ran: make(chan uint64, 4)}
			e := newEnv(t)
			svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: e.store, Agent: agent.New(p)})
			if err != nil {
				t.Fatal(err)
			}
			e.svc = svc
			h, err := e.svc.Start(t.Context(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := finish(h)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text == "" && tc.spec.Request.OutputSchema == nil {
				t.Fatal("no answer")
			}
			select {
			case id := <-p.ran:
				if got := id == goid(); got != tc.inline {
					t.Fatalf("ran on the owner's goroutine: %v, want %v", got, tc.inline)
				}
			default:
				t.Fatal("the provider was not called")
			}
			if r := e.get(t, h.Run().ID); r.Status != runner.StatusCompleted {
				t.Fatalf("status %s", r.Status)
			}
		})
	}
}

// An inline run whose owner finishes it without waiting (a later stage
// failed) is still ended: Finish runs its agent under the ended context and
// records the owner's error, without waiting for anyone.
func TestInlineFinishedUnwaited(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("a later stage failed")
	if err := h.Finish(nil, failed); !errors.Is(err, failed) {
		t.Fatalf("Finish: %v", err)
	}
	if r := e.get(t, h.Run().ID); r.Status != runner.StatusFailed {
		t.Fatalf("status %s, want failed", r.Status)
	}
	if _, err := h.Wait(); err == nil {
		t.Fatal("Wait after Finish: no error from an agent that never ran to its end")
	}
}
