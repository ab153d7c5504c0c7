package openai

import "github.com/runedge/runedge/runner"

// EstimateInputTokens estimates the prompt tokens an upstream will count
// for msgs and tools, without asking it (chat completions has no counting
// endpoint): one token per four bytes of text (role, content, each call's
// name and arguments, each tool's name, description and parameters,
// rounded up), plus 3 per message and 3 for the reply's priming, as
// OpenAI's published counting recipe adds. It is an estimate: English text
// runs close to four bytes a token in the GPT tokenizers, other text and
// other upstreams' tokenizers differ.
func EstimateInputTokens(msgs []runner.Message, tools []runner.Tool) int {
	n := 3
	for _, m := range msgs {
		b := len(m.Role) + m.TextLen() + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			b += len(c.Name) + len(c.Arguments)
		}
		n += 3 + (b+3)/4
	}
	for _, t := range tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters) + 3) / 4
	}
	return n
}
