package compat

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/runedge/runedge/internal/sdkcheck"
)

func TestSDKDecodesChatCompletion(t *testing.T) {
	for _, file := range []string{"chat_completed", "chat_length", "chat_escapes"} {
		t.Run(file, func(t *testing.T) {
			c := sdkcheck.Decode[openai.ChatCompletion](t, mapResultFile(t, "testdata/result/"+file+".json"))
			sdkcheck.Keys(t, "chat.completion", c)
			sdkcheck.Keys(t, "usage", c.Usage)
			sdkcheck.Keys(t, "usage.prompt_tokens_details", c.Usage.PromptTokensDetails)
			sdkcheck.Keys(t, "usage.completion_tokens_details", c.Usage.CompletionTokensDetails)
			if len(c.Choices) != 1 {
				t.Fatalf("choices: %d", len(c.Choices))
			}
			sdkcheck.Keys(t, "choice", c.Choices[0])
			sdkcheck.Keys(t, "message", c.Choices[0].Message)
			if c.ID != streamChatID || c.Created != streamCreated || c.Model != "service" || c.Usage.TotalTokens != 19 {
				t.Errorf("decoded %+v", c)
			}
			if c.Choices[0].Message.JSON.Refusal.Raw() != "null" || c.Choices[0].Message.Content == "" {
				t.Errorf("message %+v", c.Choices[0].Message)
			}
		})
	}
}

// checkResponse checks a decoded Response and its nested objects.
func checkResponse(t *testing.T, r responses.Response) {
	t.Helper()
	// The API returns store on every Response although its published
	// schema (and so the SDK) leaves it out; clients that log it expect it.
	// output_text and metadata.service are the service's contract
	// (docs/api.md "Responses that remember"): the SDK computes the first and types
	// metadata as strings only, so the second is checked by hand.
	sdkcheck.Keys(t, "response", r, "store", "output_text", "background", "metadata",
		"presence_penalty", "frequency_penalty") // Open Responses requires both; openai-go v3 predates them
	sdkcheck.ServiceMetadata(t, r.RawJSON())
	sdkcheck.Keys(t, "reasoning", r.Reasoning)
	sdkcheck.Keys(t, "text", r.Text)
	if r.Status != "in_progress" {
		sdkcheck.Keys(t, "usage", r.Usage)
		sdkcheck.Keys(t, "usage.input_tokens_details", r.Usage.InputTokensDetails)
		sdkcheck.Keys(t, "usage.output_tokens_details", r.Usage.OutputTokensDetails)
	}
	for _, item := range r.Output {
		checkMessage(t, item.AsMessage())
	}
}

func checkMessage(t *testing.T, m responses.ResponseOutputMessage) {
	t.Helper()
	sdkcheck.Keys(t, "output message", m)
	for _, part := range m.Content {
		sdkcheck.Keys(t, "output_text", part.AsOutputText())
	}
}

func TestSDKDecodesResponse(t *testing.T) {
	for _, c := range []struct{ file, status, text string }{
		{"responses_completed", "completed", "Hello! How can I help?"},
		{"responses_in_progress", "in_progress", ""},
		{"responses_incomplete", "incomplete", "Once upon a"},
		{"responses_echoed_settings", "completed", `{"a":1}`},
		{"responses_without_echo", "completed", "ok"},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := sdkcheck.Decode[responses.Response](t, mapResultFile(t, "testdata/result/"+c.file+".json"))
			checkResponse(t, r)
			if string(r.Status) != c.status || r.OutputText() != c.text || r.ID != streamResponseID {
				t.Errorf("status %q text %q id %q", r.Status, r.OutputText(), r.ID)
			}
			if c.status == "incomplete" && r.IncompleteDetails.Reason != "max_output_tokens" {
				t.Errorf("incomplete_details %+v", r.IncompleteDetails)
			}
		})
	}
}
