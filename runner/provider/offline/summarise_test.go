package offline

import (
	"context"
	"testing"

	"github.com/runedge/runedge/runner"
)

// The compaction rule is deterministic and keeps every user turn and
// every earlier summary; a conversation holding a summary names it.
func TestSummarise(t *testing.T) {
	p := New(Config{})
	gen := func(msgs ...runner.Message) string {
		t.Helper()
		res, err := p.Generate(context.Background(), runner.ProviderRequest{Messages: msgs}, func(runner.Event) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	sum := runner.Message{Role: "system", Content: runner.CompactedContextPrefix + "Summary: a | b"}
	got := gen(sum, runner.Message{Role: "user", Content: "c  d"}, runner.Message{Role: "assistant", Content: "You said: c d"},
		runner.Message{Role: "user", Content: runner.CompactionPrompt})
	if want := "Summary: a | b | c d"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got, want := gen(sum, runner.Message{Role: "user", Content: "hi"}), "You said: hi (earlier: Summary: a | b)"; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
