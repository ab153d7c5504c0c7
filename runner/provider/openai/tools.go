package openai

import (
	"encoding/json"

	"github.com/runedge/runedge/runner"
)

// Function tools on the chat completions wire: definitions and choice out,
// calls back (whole, or as delta.tool_calls fragments), and earlier calls
// and their results replayed in the conversation.

type wireMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant message that only calls tools, as
	// OpenAI sends it (some upstreams refuse "" there); a *string, or
	// the []wirePart of a message with images, files or audio (parts.go).
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// ReasoningContent is the reasoning of an assistant message, as
	// reasoning upstreams (vLLM, DeepSeek) return it: the opened reasoning
	// items that precede the message (reasoning.go).
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolFunc `json:"function"`
}

type wireToolFunc struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// wireToolCallDelta is one element of a chunk's delta.tool_calls.
type wireToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// wireMessages is the conversation on the wire. Reasoning items are left
// out: a chat completions upstream has no item for them (they stay in the
// stored history). The reasoning this service sealed and opened again
// (Reasoning.Opened) goes upstream as the reasoning_content of the
// assistant message it belongs to: the one right before it, as runedge
// orders a Response's output (its reasoning item last), else the one right
// after it, as OpenAI orders it. Reasoning next to no assistant message is
// dropped.
func wireMessages(msgs []runner.Message) []wireMessage {
	out := make([]wireMessage, 0, len(msgs))
	var pending string // opened reasoning waiting for the assistant message after it
	for i, m := range msgs {
		if m.Role == runner.RoleReasoning {
			if r := m.Reasoning; r != nil && r.Opened != "" {
				if n := len(out); n > 0 && out[n-1].Role == "assistant" {
					out[n-1].ReasoningContent = joinReasoning(out[n-1].ReasoningContent, r.Opened)
				} else {
					pending = joinReasoning(pending, r.Opened)
				}
			}
			continue
		}
		w := wireMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Role == "assistant" {
			w.ReasoningContent = pending
		}
		pending = ""
		switch {
		case len(m.Parts) > 0:
			w.Content = wireParts(m.Parts)
		case m.Content != "" || len(m.ToolCalls) == 0:
			w.Content = &msgs[i].Content
		}
		for _, c := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
				Function: wireFunction{Name: c.Name, Arguments: callArguments(c)}})
		}
		out = append(out, w)
	}
	return out
}

// joinReasoning is the reasoning texts a and b of one assistant message,
// a blank line between.
func joinReasoning(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func wireTools(tools []runner.Tool) []wireTool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		out[i] = wireTool{Type: "function", Function: wireToolFunc{Name: t.Name, Description: t.Description,
			Parameters: t.Parameters, Strict: t.Strict}}
	}
	return out
}

// wireToolChoice is tool_choice as chat completions spells it; nil (left
// out) for auto, the upstream default.
func wireToolChoice(c runner.ToolChoice) any {
	switch c.Mode {
	case runner.ToolChoiceNone, runner.ToolChoiceRequired:
		return c.Mode
	case runner.ToolChoiceFunction:
		return map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}
	}
	return nil
}

func toolCalls(w []wireToolCall) []runner.ToolCall {
	if len(w) == 0 {
		return nil
	}
	out := make([]runner.ToolCall, len(w))
	for i, c := range w {
		out[i] = runner.ToolCall{ID: callID(c.ID), Name: c.Function.Name, Arguments: c.Function.Arguments}
	}
	return out
}

// callID is the upstream's call id, or a new one when it sent none (some
// local servers do not): the client needs an id to pair its result with.
func callID(id string) string {
	if id == "" {
		return runner.NewID("call_")
	}
	return id
}

// callBuilder gathers streamed tool-call fragments into whole calls, in
// index order.
type callBuilder struct {
	calls []runner.ToolCall
	index map[int]int // upstream index → position in calls
}

// add records fragment d and returns it in the runner's numbering (the
// order in which calls first appeared, from 0).
func (b *callBuilder) add(d wireToolCallDelta) runner.ToolCallDelta {
	if b.index == nil {
		b.index = map[int]int{}
	}
	pos, ok := b.index[d.Index]
	if !ok {
		pos = len(b.calls)
		b.index[d.Index] = pos
		// The first fragment carries the id (one is made up if the
		// upstream sent none), so the client sees it first.
		b.calls = append(b.calls, runner.ToolCall{ID: callID(d.ID)})
	}
	c := &b.calls[pos]
	out := runner.ToolCallDelta{Index: pos, Arguments: d.Function.Arguments}
	if !ok {
		out.ID = c.ID
	}
	if c.Name == "" && d.Function.Name != "" {
		c.Name, out.Name = d.Function.Name, d.Function.Name
	}
	c.Arguments += d.Function.Arguments
	return out
}
