package offline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// The offline provider's tool rule (its README.md, "Tools"): with tools offered
// and tool_choice not none, a last user message that names offered tools
// gets a call of each (the first only when parallel_tool_calls is false),
// and tool_choice required or {name} forces a call; arguments are generated
// from the tool's parameters schema, seeded with the words after the tool's
// name. A conversation that ends in tool results gets a text answer that
// quotes them.

// toolsToCall picks the tools the answer calls, in the order offered; none
// when the answer is text.
func toolsToCall(req runner.ProviderRequest, msgs []runner.Message, said string) []runner.Tool {
	if len(req.Tools) == 0 || req.ToolChoice.Mode == runner.ToolChoiceNone || endsInToolResults(msgs) {
		return nil
	}
	if req.ToolChoice.Mode == runner.ToolChoiceFunction {
		i := slices.IndexFunc(req.Tools, func(t runner.Tool) bool { return t.Name == req.ToolChoice.Name })
		if i < 0 {
			return nil
		}
		return req.Tools[i : i+1]
	}
	words := strings.Fields(said)
	var named []runner.Tool
	for _, t := range req.Tools {
		if slices.Contains(words, t.Name) {
			named = append(named, t)
		}
	}
	if len(named) == 0 && req.ToolChoice.Mode == runner.ToolChoiceRequired {
		named = req.Tools[:1]
	}
	if len(named) > 1 && req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		named = named[:1]
	}
	return named
}

// endsInToolResults reports whether the last message is a tool result.
func endsInToolResults(msgs []runner.Message) bool {
	return len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool"
}

// calls builds the calls of tools: ids derived from the conversation (the
// same request always gets the same ids; another turn gets others) and
// arguments generated from each tool's schema.
func calls(msgs []runner.Message, said string, tools []runner.Tool) ([]runner.ToolCall, error) {
	h := sha256.New()
	for _, m := range msgs {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", m.Role, m.Content, len(m.ToolCalls))
	}
	turn := h.Sum(nil)
	out := make([]runner.ToolCall, 0, len(tools))
	for i, t := range tools {
		args := "{}"
		if len(t.Parameters) > 0 {
			doc, err := schema.Generate(t.Parameters, seedFor(said, t.Name))
			if err != nil {
				return nil, fmt.Errorf("%w: offline provider: arguments for %s: %v", runner.ErrProvider, t.Name, err)
			}
			args = string(doc)
		}
		id := sha256.Sum256(fmt.Appendf(turn, "%d\x00%s", i, t.Name))
		out = append(out, runner.ToolCall{ID: "call_" + hex.EncodeToString(id[:12]), Name: t.Name, Arguments: args})
	}
	return out, nil
}

// seedFor is the text the arguments are generated from: the words after the
// tool's name ("get_weather Paris" → "Paris"), or the whole message when
// nothing follows it.
func seedFor(said, name string) string {
	words := strings.Fields(said)
	if i := slices.Index(words, name); i >= 0 && i+1 < len(words) {
		return strings.Join(words[i+1:], " ")
	}
	return said
}

// quoteResults is the text answer to a conversation that ends in tool
// results: each result quoted, named by its call.
func quoteResults(msgs []runner.Message) string {
	first := len(msgs)
	for first > 0 && msgs[first-1].Role == "tool" {
		first--
	}
	names := map[string]string{}
	for _, m := range msgs[:first] {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	var b strings.Builder
	for i, m := range msgs[first:] {
		if i > 0 {
			b.WriteString(" ")
		}
		name := names[m.ToolCallID]
		if name == "" {
			name = "the tool"
		}
		b.WriteString(name + " returned: " + strings.Join(strings.Fields(m.Content), " "))
	}
	return b.String()
}

// emitCalls streams calls as a model does: the first fragment of each call
// carries its id and name, then the arguments follow in ~16-byte pieces,
// TokenDelay apart. It returns how many fragments it emitted.
func (p *Provider) emitCalls(ctx context.Context, cs []runner.ToolCall, emit func(runner.Event) error) (int, error) {
	n := 0
	for i, c := range cs {
		frags := append([]string{""}, pieces(c.Arguments, 16)...)
		for j, f := range frags {
			if n > 0 {
				if err := sleep(ctx, p.cfg.TokenDelay); err != nil {
					return n, err
				}
			}
			if err := ctx.Err(); err != nil {
				return n, err
			}
			d := runner.ToolCallDelta{Index: i, Arguments: f}
			if j == 0 {
				d.ID, d.Name = c.ID, c.Name
			}
			if err := emit(runner.Event{ToolCall: &d}); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
