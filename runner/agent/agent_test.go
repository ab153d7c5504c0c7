package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
)

// stub is a provider that emits fixed deltas and records what it was asked
// and what the agent emitted while it was still generating.
type stub struct {
	deltas []string
	err    error

	got           runner.ProviderRequest
	emittedDuring int // events the agent emitted before Generate returned
	events        *[]string
}

func (s *stub) Name() string { return "stub" }

func (s *stub) Generate(ctx context.Context, req runner.ProviderRequest, emit func(string) error) (runner.Result, error) {
	s.got = req
	var text strings.Builder
	for _, d := range s.deltas {
		if err := emit(d); err != nil {
			return runner.Result{}, err
		}
		text.WriteString(d)
	}
	s.emittedDuring = len(*s.events)
	return runner.Result{Text: text.String(), FinishReason: "stop"}, s.err
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
	if !slices.Equal(s.got.Messages, want) {
		t.Fatalf("provider got %+v, want %+v", s.got.Messages, want)
	}
	if s.got.MaxOutputTokens != 7 || s.got.SchemaName != "n" {
		t.Fatalf("provider request lost fields: %+v", s.got)
	}
	s = &stub{deltas: []string{"ok"}}
	if _, _, err := run(t, s, runner.Request{Input: user}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.got.Messages, user) {
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
			events, _, err := run(t, &stub{deltas: c.deltas}, c.req)
			if !errors.Is(err, runner.ErrOutputInvalid) {
				t.Fatalf("err = %v, want ErrOutputInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %q does not contain %q", err, c.want)
			}
			if len(events) != 0 {
				t.Fatalf("invalid output was emitted: %q", events)
			}
		})
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
	_, _, err := run(t, &stub{err: boom}, runner.Request{Input: user, OutputSchema: []byte(personSchema)})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the provider's error", err)
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
