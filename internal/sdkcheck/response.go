package sdkcheck

import (
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

// Response checks a decoded Response and its nested objects, the output
// messages included.
func Response(t testing.TB, r responses.Response) {
	t.Helper()
	// The API returns store on every Response although its published
	// schema (and so the SDK) leaves it out; clients that log it expect it.
	// output_text and metadata.service are the service's contract
	// (docs/api.md "Responses that remember"): the SDK computes the first and types
	// metadata as strings only, so the second is checked by hand.
	Keys(t, "response", r, "store", "output_text", "background", "metadata",
		"presence_penalty", "frequency_penalty") // Open Responses requires both; openai-go v3 predates them
	ServiceMetadata(t, r.RawJSON())
	Keys(t, "reasoning", r.Reasoning)
	Keys(t, "text", r.Text)
	if r.Status != "in_progress" {
		Keys(t, "usage", r.Usage)
		Keys(t, "usage.input_tokens_details", r.Usage.InputTokensDetails)
		Keys(t, "usage.output_tokens_details", r.Usage.OutputTokensDetails)
	}
	for _, item := range r.Output {
		Message(t, item.AsMessage())
	}
}

// Message checks one output message and its text parts.
func Message(t testing.TB, m responses.ResponseOutputMessage) {
	t.Helper()
	Keys(t, "output message", m)
	for _, part := range m.Content {
		Keys(t, "output_text", part.AsOutputText())
	}
}
