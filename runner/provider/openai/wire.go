package openai

import (
	"encoding/json"

	"github.com/runedge/runedge/runner"
)

// The parts of chat completion replies the provider reads. Unknown fields
// are ignored: upstreams add their own.

type wireUsage struct {
	PromptTokens            int               `json:"prompt_tokens"`
	CompletionTokens        int               `json:"completion_tokens"`
	TotalTokens             int               `json:"total_tokens"`
	PromptTokensDetails     *wireTokenDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails *wireTokenDetails `json:"completion_tokens_details"`
}

// wireTokenDetails are the usage details an upstream may report:
// prompt_tokens_details.cached_tokens (OpenAI, vLLM, DeepSeek),
// .cache_write_tokens (OpenRouter) and
// completion_tokens_details.reasoning_tokens.
type wireTokenDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
}

func (u *wireUsage) usage() runner.Usage {
	if u == nil {
		return runner.Usage{}
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	r := runner.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: total}
	if d := u.PromptTokensDetails; d != nil {
		r.CachedTokens, r.CacheWriteTokens = d.CachedTokens, d.CacheWriteTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		r.ReasoningTokens = d.ReasoningTokens
	}
	return r
}

// wireChunk is one streamed chat.completion.chunk.
type wireChunk struct {
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage"`
	Error   json.RawMessage   `json:"error"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content   string              `json:"content"`
	Refusal   string              `json:"refusal"`
	ToolCalls []wireToolCallDelta `json:"tool_calls"`
	// The model's reasoning, where a reasoning upstream puts it
	// (reasoning.go).
	ReasoningContent reasoningText `json:"reasoning_content"`
	Reasoning        reasoningText `json:"reasoning"`
}

// wireCompletion is a whole chat.completion.
type wireCompletion struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Message      wireReply `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

// wireReply is a whole answer's message.
type wireReply struct {
	Content          string         `json:"content"`
	Refusal          string         `json:"refusal"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
	ReasoningContent reasoningText  `json:"reasoning_content"`
	Reasoning        reasoningText  `json:"reasoning"`
}

// finishReason narrows the upstream's reason to the runner's three: a
// cut-off answer ("length") and an answer that is tool calls differ for the
// client; content filters and the rest ended the answer. Whether the answer
// is calls is decided by the calls themselves, not by the reason (some
// upstreams say "stop" after calls, or "tool_calls" without any).
func finishReason(s string, calls int) string {
	switch {
	case calls > 0:
		return "tool_calls"
	case s == "length":
		return "length"
	}
	return "stop"
}

// hasError reports whether an "error" member is present and not null.
func hasError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// errorText is the message of an in-band error object or string.
func errorText(raw json.RawMessage, apiKey string) string {
	var obj struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(raw, &obj) == nil && obj.Message != "":
		s = obj.Message
	case json.Unmarshal(raw, &s) == nil:
	default:
		s = string(raw)
	}
	return redact(clip(s, 300), apiKey)
}
