package runner

import (
	"errors"
	"testing"
)

// A tool result must answer a call made earlier in the agent's input.
func TestCheckToolResults(t *testing.T) {
	call := Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}
	result := func(id string) Message { return Message{Role: "tool", ToolCallID: id, Content: "r"} }
	user := Message{Role: "user", Content: "x"}
	for _, c := range []struct {
		name string
		in   []Message
		bad  string
	}{
		{"no tools", []Message{user}, ""},
		{"answered", []Message{user, call, result("c1")}, ""},
		{"answered twice", []Message{user, call, result("c1"), result("c1")}, ""},
		{"unanswered", []Message{user, result("c1")}, "c1"},
		{"before its call", []Message{user, result("c1"), call}, "c1"},
		{"another call", []Message{user, call, result("c2")}, "c2"},
	} {
		err := checkToolResults(c.in)
		var ur *UnansweredResultError
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.bad != "" && (!errors.As(err, &ur) || ur.CallID != c.bad || !errors.Is(err, ErrInvalidRequest)):
			t.Errorf("%s: want UnansweredResultError for %s, got %v", c.name, c.bad, err)
		}
	}
}
