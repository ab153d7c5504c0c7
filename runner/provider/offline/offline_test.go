package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/schema"
)

func generate(t *testing.T, p *offline.Provider, req runner.ProviderRequest) ([]string, runner.Result, error) {
	t.Helper()
	var deltas []string
	res, err := p.Generate(t.Context(), req, func(ev runner.Event) error {
		d := ev.Delta
		deltas = append(deltas, d)
		return nil
	})
	return deltas, res, err
}

func userSays(text string) []runner.Message {
	return []runner.Message{
		{Role: "system", Content: "be nice"},
		{Role: "user", Content: "earlier message"},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Content: text},
	}
}

func TestEchoesWordByWord(t *testing.T) {
	deltas, res, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{Messages: userSays("  hello \n  world ")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"You", " said:", " hello", " world"}; !slices.Equal(deltas, want) {
		t.Fatalf("deltas %q, want %q", deltas, want)
	}
	want := runner.Result{Text: "You said: hello world", FinishReason: "stop",
		Usage: runner.Usage{InputTokens: 7, OutputTokens: 4, TotalTokens: 11}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("result %+v, want %+v", res, want)
	}
}

func TestMaxOutputTokensTruncates(t *testing.T) {
	deltas, res, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{Messages: userSays("a b c d"), MaxOutputTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) != 3 || res.Text != "You said: a" || res.FinishReason != "length" || res.Usage.OutputTokens != 3 {
		t.Fatalf("deltas %q result %+v", deltas, res)
	}
}

func TestTokenDelayIsCancellable(t *testing.T) {
	// An hour between tokens: a delay that outlived the context would
	// take it, so a bound of a minute is met at once or never, whatever
	// the machine's load.
	p := offline.New(offline.Config{TokenDelay: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	start := time.Now()
	var got []string
	_, err := p.Generate(ctx, runner.ProviderRequest{Messages: userSays("one two three")}, func(ev runner.Event) error {
		d := ev.Delta
		got = append(got, d)
		cancel() // the consumer goes away after the first token
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(got) != 1 {
		t.Fatalf("emitted %q after cancel", got)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("returned after %v; the delay must not outlive the context", d)
	}
}

func TestTokenDelaySpacesTokens(t *testing.T) {
	p := offline.New(offline.Config{TokenDelay: 20 * time.Millisecond})
	start := time.Now()
	if _, _, err := generate(t, p, runner.ProviderRequest{Messages: userSays("a b c")}); err != nil {
		t.Fatal(err)
	}
	// Five tokens, four gaps.
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("took %v, want at least 4 delays of 20ms", d)
	}
}

func TestEmitErrorStops(t *testing.T) {
	gone := errors.New("gone")
	n := 0
	_, err := offline.New(offline.Config{}).Generate(t.Context(), runner.ProviderRequest{Messages: userSays("a b c")}, func(runner.Event) error {
		n++
		return gone
	})
	if !errors.Is(err, gone) || n != 1 {
		t.Fatalf("err %v after %d emits, want the emit error after 1", err, n)
	}
}

const taskSchema = `{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"n":{"type":"integer","minimum":3}},"required":["title","tags","n"],"additionalProperties":false}`

func TestStructuredOutputConformsAndIsChunked(t *testing.T) {
	deltas, res, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{
		Messages: userSays("plan the party"), OutputSchema: []byte(taskSchema)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile([]byte(taskSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(res.Text)); err != nil {
		t.Fatalf("document %s: %v", res.Text, err)
	}
	if !strings.Contains(res.Text, `"title":"plan the party"`) {
		t.Fatalf("document not seeded from the user text: %s", res.Text)
	}
	if strings.Join(deltas, "") != res.Text || len(deltas) < 2 {
		t.Fatalf("deltas %q do not rebuild the %d-byte document in pieces", deltas, len(res.Text))
	}
	for _, d := range deltas[:len(deltas)-1] {
		if len(d) < 16 || len(d) > 19 {
			t.Fatalf("delta %q is %d bytes, want ~16", d, len(d))
		}
	}
	if res.Usage.OutputTokens != len(deltas) {
		t.Fatalf("output tokens %d, want %d (one per delta)", res.Usage.OutputTokens, len(deltas))
	}
}

func TestChunksNeverSplitRunes(t *testing.T) {
	deltas, _, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{
		Messages: userSays("ééééééééééééééééééé"), JSONObject: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 {
		t.Fatalf("want several deltas, got %q", deltas)
	}
	for _, d := range deltas {
		if !utf8.ValidString(d) {
			t.Fatalf("delta %q splits a UTF-8 sequence", d)
		}
	}
}

func TestJSONObject(t *testing.T) {
	_, res, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{Messages: userSays(`say "hi"`), JSONObject: true})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(res.Text), &v); err != nil || v["answer"] != `You said: say "hi"` {
		t.Fatalf("text %s (%v)", res.Text, err)
	}
}

func TestDirectives(t *testing.T) {
	p := offline.New(offline.Config{})
	t.Run("fail", func(t *testing.T) {
		deltas, _, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/fail now")})
		if !errors.Is(err, runner.ErrProvider) || !strings.Contains(err.Error(), "offline provider: simulated failure") || len(deltas) != 0 {
			t.Fatalf("err %v deltas %q", err, deltas)
		}
	})
	t.Run("fail-mid", func(t *testing.T) {
		deltas, _, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/fail-mid tell me a long story")})
		if !errors.Is(err, runner.ErrProvider) {
			t.Fatalf("err = %v, want ErrProvider", err)
		}
		if want := []string{"You", " said:", " /fail-mid"}; !slices.Equal(deltas, want) {
			t.Fatalf("deltas %q, want %q", deltas, want)
		}
	})
	t.Run("wait", func(t *testing.T) {
		_, _, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/wait for me")})
		if !errors.Is(err, runner.ErrWaiting) || errors.Is(err, runner.ErrProvider) {
			t.Fatalf("err = %v, want ErrWaiting only", err)
		}
	})
	t.Run("invalid with schema", func(t *testing.T) {
		_, res, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/invalid"), OutputSchema: []byte(taskSchema)})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := schema.Compile([]byte(taskSchema))
		if s.Validate([]byte(res.Text)) == nil {
			t.Fatalf("/invalid produced a valid document %s", res.Text)
		}
	})
	t.Run("invalid with accept-all schema", func(t *testing.T) {
		_, res, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/invalid"), OutputSchema: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := schema.Compile([]byte(`{}`))
		if s.Validate([]byte(res.Text)) == nil {
			t.Fatalf("/invalid produced a valid document %s", res.Text)
		}
	})
	t.Run("invalid without schema is text", func(t *testing.T) {
		_, res, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/invalid x")})
		if err != nil || res.Text != "You said: /invalid x" {
			t.Fatalf("text %q err %v", res.Text, err)
		}
	})
	t.Run("only the first word counts", func(t *testing.T) {
		_, res, err := generate(t, p, runner.ProviderRequest{Messages: userSays("/failure is fine")})
		if err != nil || res.Text != "You said: /failure is fine" {
			t.Fatalf("text %q err %v", res.Text, err)
		}
	})
	t.Run("only the last user message counts", func(t *testing.T) {
		msgs := []runner.Message{{Role: "user", Content: "/fail"}, {Role: "user", Content: "hi"}}
		if _, _, err := generate(t, p, runner.ProviderRequest{Messages: msgs}); err != nil {
			t.Fatalf("err %v; an earlier /fail must not count", err)
		}
	})
}

func TestUnsatisfiableSchemaIsProviderError(t *testing.T) {
	_, _, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{
		Messages: userSays("x"), OutputSchema: []byte(`{"type":"string","pattern":"^q{5}z$"}`)})
	if !errors.Is(err, runner.ErrProvider) {
		t.Fatalf("err = %v, want ErrProvider", err)
	}
}

// repairOf is the conversation the agent sends on a repair attempt.
func repairOf(msgs []runner.Message, rejected string) []runner.Message {
	return append(append([]runner.Message{}, msgs...),
		runner.Message{Role: "assistant", Content: rejected},
		runner.Message{Role: "user", Content: "Your previous answer does not match the schema. Reply again."})
}

func TestRepairAttempts(t *testing.T) {
	p := offline.New(offline.Config{})
	s, err := schema.Compile([]byte(taskSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		said        string
		repairValid bool
	}{{"/invalid plan", false}, {"/invalid-once plan", true}} {
		t.Run(c.said, func(t *testing.T) {
			first := runner.ProviderRequest{Messages: userSays(c.said), OutputSchema: []byte(taskSchema), Attempt: 1}
			_, res, err := generate(t, p, first)
			if err != nil {
				t.Fatal(err)
			}
			if s.Validate([]byte(res.Text)) == nil {
				t.Fatalf("first attempt produced a valid document %s", res.Text)
			}
			second := first
			second.Messages, second.Attempt = repairOf(first.Messages, res.Text), 2
			_, res, err = generate(t, p, second)
			if err != nil {
				t.Fatal(err)
			}
			if valid := s.Validate([]byte(res.Text)) == nil; valid != c.repairValid {
				t.Fatalf("repair answered %s (valid %v), want valid %v", res.Text, valid, c.repairValid)
			}
			if c.repairValid && !strings.Contains(res.Text, `"title":"/invalid-once plan"`) {
				t.Fatalf("repair not seeded from the client's message: %s", res.Text)
			}
		})
	}
	// Without the repair marker the complaint is an ordinary last message.
	plain := runner.ProviderRequest{Messages: repairOf(userSays("/invalid x"), "{}"), OutputSchema: []byte(taskSchema)}
	if _, res, err := generate(t, p, plain); err != nil || s.Validate([]byte(res.Text)) != nil {
		t.Fatalf("attempt 0 read the directive from before the last message: %s %v", res.Text, err)
	}
}
