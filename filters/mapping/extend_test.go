package mapping

import (
	"slices"
	"testing"

	"github.com/runedge/runedge/runner"
)

// Two turns that continue the same mapped turn (a regenerated answer
// beside the next question, at once) each get the messages of their own
// items: the first takes the room past the entry's messages, the second
// copies, and neither changes what the other, or the turn before them,
// got.
func TestExtendTakesRoomOnce(t *testing.T) {
	msg := func(s string) runner.Message { return runner.Message{Role: "user", Content: s} }
	var e mappedItems
	out, tail := e.extend([]runner.Message{msg("u0"), msg("a0")})
	e = mappedItems{msgs: out, tail: tail}
	if cap(out) == len(out) {
		t.Fatalf("no room past a new entry's %d messages", len(out))
	}
	b, _ := e.extend([]runner.Message{msg("u1")})
	c, _ := e.extend([]runner.Message{msg("u2")})
	if &b[0] != &out[0] {
		t.Errorf("the first turn after the entry copied its messages; want them appended in its room")
	}
	if &c[0] == &out[0] {
		t.Errorf("the second turn after the entry wrote to the room the first took")
	}
	want := func(got []runner.Message, texts ...string) {
		t.Helper()
		var s []string
		for _, m := range got {
			s = append(s, m.Content)
		}
		if !slices.Equal(s, texts) {
			t.Errorf("messages %q, want %q", s, texts)
		}
	}
	want(b, "u0", "a0", "u1")
	want(c, "u0", "a0", "u2")
	want(out, "u0", "a0")
	// No new item: the same messages, the room still free.
	if same, _ := e.extend(nil); len(same) != 2 || &same[0] != &out[0] {
		t.Errorf("a turn with no new item got %d messages, copied: %v", len(same), &same[0] != &out[0])
	}
}
