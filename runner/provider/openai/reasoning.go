package openai

import (
	"encoding/json"

	"github.com/runedge/runedge/internal/jsonfast"
)

// Reasoning upstreams (vLLM with a reasoning parser, DeepSeek, OpenRouter)
// put the model's reasoning beside the answer in chat completions
// messages and deltas, as reasoning_content or reasoning. It becomes the
// answer's Result.Reasoning; when both are given, reasoning_content (the
// older, more common name) wins, so an upstream that sends both does not
// double it.
//
// Only a string is reasoning text: OpenRouter and others also send objects
// (reasoning_details, encrypted blobs) under neighbouring names, and an
// unexpected shape must not turn a working answer into a provider failure,
// so any other value is ignored.

// reasoningText is a reasoning member: its string, or "" for any other
// value.
type reasoningText string

func (r *reasoningText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = reasoningText(s)
	}
	return nil
}

// reasoningString is the fast path's reading of a reasoning member, as
// reasoningText's UnmarshalJSON reads it.
func reasoningString(v jsonfast.Value, dst *string) bool {
	if !v.IsString() {
		return true
	}
	return jsonfast.String(v, dst)
}

// pick is the reasoning of a message or delta.
func pick(reasoningContent, reasoning reasoningText) string {
	if reasoningContent != "" {
		return string(reasoningContent)
	}
	return string(reasoning)
}
