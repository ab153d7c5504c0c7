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
			sdkcheck.Response(t, r)
			if string(r.Status) != c.status || r.OutputText() != c.text || r.ID != streamResponseID {
				t.Errorf("status %q text %q id %q", r.Status, r.OutputText(), r.ID)
			}
			if c.status == "incomplete" && r.IncompleteDetails.Reason != "max_output_tokens" {
				t.Errorf("incomplete_details %+v", r.IncompleteDetails)
			}
		})
	}
}
