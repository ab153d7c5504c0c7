package agent_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
)

// stub is a provider that emits fixed deltas and records what it was asked
// and what the agent emitted while it was still generating.
type stub struct {
	deltas []string
	// repair, when set, is what the second call answers instead of deltas.
	repair []string
	err    error
	// repairErr, when set, is the second call's error instead of err.
	repairErr error

	got           runner.ProviderRequest
	calls         []runner.ProviderRequest
	emittedDuring int // events the agent emitted before Generate returned
	events        *[]string
}

func (s *stub) Name() string { return "stub" }

func (s *stub) Generate(ctx context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	s.got = req
	s.calls = append(s.calls, req)
	deltas, err := s.deltas, s.err
	if len(s.calls) > 1 && s.repair != nil {
		deltas = s.repair
	}
	if len(s.calls) > 1 && s.repairErr != nil {
		err = s.repairErr
	}
	var text strings.Builder
	for _, d := range deltas {
		if err := emit(runner.Event{Delta: d}); err != nil {
			return runner.Result{}, err
		}
		text.WriteString(d)
	}
	s.emittedDuring = len(*s.events)
	return runner.Result{Text: text.String(), FinishReason: "stop",
		Usage: runner.Usage{InputTokens: 10, OutputTokens: len(deltas), TotalTokens: 10 + len(deltas)}}, err
}

func run(t *testing.T, s *stub, req runner.Request) ([]string, runner.Result, error) {
	t.Helper()
	var events []string
	s.events = &events
	res, err := agent.New(s).Run(t.Context(), req, func(ev runner.Event) error {
		events = append(events, ev.Delta)
		return nil
	})
	return events, res, err
}

var user = []runner.Message{{Role: "user", Content: "hi"}}

func TestInstructionsBecomeLeadingSystemMessage(t *testing.T) {
	s := &stub{deltas: []string{"ok"}}
	if _, _, err := run(t, s, runner.Request{Input: user, Instructions: "be brief", MaxOutputTokens: 7, SchemaName: "n"}); err != nil {
		t.Fatal(err)
	}
	want := []runner.Message{{Role: "system", Content: "be brief"}, user[0]}
	if !reflect.DeepEqual(s.got.Messages, want) {
		t.Fatalf("provider got %+v, want %+v", s.got.Messages, want)
	}
	if s.got.MaxOutputTokens != 7 || s.got.SchemaName != "n" {
		t.Fatalf("provider request lost fields: %+v", s.got)
	}
	s = &stub{deltas: []string{"ok"}}
	if _, _, err := run(t, s, runner.Request{Input: user}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.got.Messages, user) {
		t.Fatalf("without instructions provider got %+v, want the input unchanged", s.got.Messages)
	}
}

func TestFreeTextStreamsThrough(t *testing.T) {
	s := &stub{deltas: []string{"You", " said:", " hi"}}
	events, res, err := run(t, s, runner.Request{Input: user})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(events, s.deltas) || res.Text != "You said: hi" {
		t.Fatalf("events %q text %q", events, res.Text)
	}
	if s.emittedDuring != 3 {
		t.Fatalf("%d events while generating, want 3 (free text is not buffered)", s.emittedDuring)
	}
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`

func TestStructuredOutputIsBufferedThenValidated(t *testing.T) {
	s := &stub{deltas: []string{`{"na`, `me":`, `"Ada"}`}}
	events, res, err := run(t, s, runner.Request{Input: user, OutputSchema: []byte(personSchema)})
	if err != nil {
		t.Fatal(err)
	}
	if s.emittedDuring != 0 {
		t.Fatalf("%d events emitted before validation", s.emittedDuring)
	}
	if strings.Join(events, "") != `{"name":"Ada"}` || res.Text != `{"name":"Ada"}` {
		t.Fatalf("events %q text %q", events, res.Text)
	}
	if string(s.got.OutputSchema) != personSchema {
		t.Fatalf("provider did not get the schema: %s", s.got.OutputSchema)
	}
}

func TestInvalidStructuredOutputIsNeverEmitted(t *testing.T) {
	cases := []struct {
		name   string
		req    runner.Request
		deltas []string
		want   string
	}{
		{"wrong type", runner.Request{OutputSchema: []byte(personSchema)}, []string{`{"name":`, `42}`}, "at '/name'"},
		{"extra property", runner.Request{OutputSchema: []byte(personSchema)}, []string{`{"name":"a","x":1}`}, "x"},
		{"not json", runner.Request{OutputSchema: []byte(personSchema)}, []string{`{"name":`}, "not valid JSON"},
		{"json_object given array", runner.Request{JSONObject: true}, []string{`[1,2]`}, "not a JSON object"},
		{"json_object given null", runner.Request{JSONObject: true}, []string{`null`}, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Input = user
			s := &stub{deltas: c.deltas}
			events, res, err := run(t, s, c.req)
			if !errors.Is(err, runner.ErrOutputInvalid) {
				t.Fatalf("err = %v, want ErrOutputInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "after a repair attempt") {
				t.Fatalf("err %q does not contain %q and say a repair was tried", err, c.want)
			}
			if len(events) != 0 {
				t.Fatalf("invalid output was emitted: %q", events)
			}
			if len(s.calls) != 2 || res.Attempts != 2 {
				t.Fatalf("%d provider calls, attempts %d; want one repair attempt (2)", len(s.calls), res.Attempts)
			}
			// The repair carries the rejected answer and what is wrong with it.
			msgs := s.calls[1].Messages
			if s.calls[1].Attempt != 2 || len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[1].Content != strings.Join(c.deltas, "") ||
				msgs[2].Role != "user" || !strings.Contains(msgs[2].Content, c.want) {
				t.Fatalf("repair request %+v", s.calls[1])
			}
			if s.calls[0].Attempt != 1 || len(s.calls[0].Messages) != 1 {
				t.Fatalf("first request %+v was changed by the repair", s.calls[0])
			}
		})
	}
}

func TestRepairAttemptCanSucceed(t *testing.T) {
	s := &stub{deltas: []string{`{"name":`, `42}`}, repair: []string{`{"name":`, `"Ada"}`}}
	events, res, err := run(t, s, runner.Request{Input: user, OutputSchema: []byte(personSchema), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(events, "") != `{"name":"Ada"}` || len(events) != 1 {
		t.Fatalf("events %q; want only the repaired document, once", events)
	}
	if res.Attempts != 2 || res.Text != `{"name":"Ada"}` {
		t.Fatalf("result %+v", res)
	}
	if want := (runner.Usage{InputTokens: 20, OutputTokens: 4, TotalTokens: 24}); res.Usage != want {
		t.Fatalf("usage %+v, want both attempts added: %+v", res.Usage, want)
	}
	if !s.calls[0].Stream || !s.calls[1].Stream {
		t.Fatal("the stream flag did not reach the provider")
	}
}

func TestProviderErrorOnRepairIsReturned(t *testing.T) {
	boom := errors.New("upstream down")
	s := &stub{deltas: []string{`[]`}, repairErr: boom}
	events, res, err := run(t, s, runner.Request{Input: user, JSONObject: true})
	if !errors.Is(err, boom) || res.Attempts != 2 || len(events) != 0 {
		t.Fatalf("err %v attempts %d events %q", err, res.Attempts, events)
	}
}

func TestValidFirstAnswerIsOneAttempt(t *testing.T) {
	s := &stub{deltas: []string{`{"name":"Ada"}`}}
	_, res, err := run(t, s, runner.Request{Input: user, OutputSchema: []byte(personSchema)})
	if err != nil || res.Attempts != 1 || len(s.calls) != 1 {
		t.Fatalf("err %v attempts %d calls %d", err, res.Attempts, len(s.calls))
	}
	s = &stub{deltas: []string{"free", " text"}}
	_, res, err = run(t, s, runner.Request{Input: user})
	if err != nil || res.Attempts != 1 || len(s.calls) != 1 {
		t.Fatalf("free text: err %v attempts %d calls %d", err, res.Attempts, len(s.calls))
	}
}

func TestJSONObjectAccepted(t *testing.T) {
	events, _, err := run(t, &stub{deltas: []string{`{"answer":`, `"hi"}`}}, runner.Request{Input: user, JSONObject: true})
	if err != nil || strings.Join(events, "") != `{"answer":"hi"}` {
		t.Fatalf("events %q err %v", events, err)
	}
}

func TestBadSchemaIsInvalidRequest(t *testing.T) {
	s := &stub{deltas: []string{"x"}}
	_, _, err := run(t, s, runner.Request{Input: user, OutputSchema: []byte(`{"type":7}`)})
	if !errors.Is(err, runner.ErrInvalidRequest) {
		t.Fatalf("err = %v, want ErrInvalidRequest", err)
	}
	if s.got.Messages != nil {
		t.Fatal("provider was called with an invalid schema")
	}
}

func TestProviderErrorPassesThrough(t *testing.T) {
	boom := errors.New("boom")
	s := &stub{err: boom}
	_, res, err := run(t, s, runner.Request{Input: user, OutputSchema: []byte(personSchema)})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the provider's error", err)
	}
	if len(s.calls) != 1 || res.Attempts != 1 {
		t.Fatalf("%d calls, attempts %d: a provider failure is not repaired", len(s.calls), res.Attempts)
	}
	_, res, err = run(t, &stub{err: boom}, runner.Request{Input: user})
	if !errors.Is(err, boom) || res.Attempts != 1 {
		t.Fatalf("free text: err %v attempts %d", err, res.Attempts)
	}
}

func TestEmitErrorStopsFreeText(t *testing.T) {
	gone := errors.New("consumer gone")
	s := &stub{deltas: []string{"a", "b", "c"}, events: new([]string)}
	var n int
	_, err := agent.New(s).Run(t.Context(), runner.Request{Input: user}, func(runner.Event) error {
		n++
		return gone
	})
	if !errors.Is(err, gone) || n != 1 {
		t.Fatalf("err = %v after %d emits, want the emit error after 1", err, n)
	}
}

// The reference agent on the offline provider: /invalid is refused after
// one repair attempt, /invalid-once is repaired.
func TestOfflineDirectivesThroughRepair(t *testing.T) {
	p := offline.New(offline.Config{})
	req := runner.Request{Input: []runner.Message{{Role: "user", Content: "/invalid Ada"}}, OutputSchema: []byte(personSchema)}
	var events []runner.Event
	res, err := agent.New(p).Run(t.Context(), req, func(ev runner.Event) error { events = append(events, ev); return nil })
	if !errors.Is(err, runner.ErrOutputInvalid) || res.Attempts != 2 || len(events) != 0 {
		t.Fatalf("/invalid: err %v attempts %d events %v", err, res.Attempts, events)
	}
	req.Input[0].Content = "/invalid-once Ada"
	res, err = agent.New(p).Run(t.Context(), req, func(ev runner.Event) error { events = append(events, ev); return nil })
	if err != nil || res.Attempts != 2 || len(events) != 1 || events[0].Delta != `{"name":"/invalid-once Ada"}` {
		t.Fatalf("/invalid-once: err %v attempts %d events %v", err, res.Attempts, events)
	}
}
