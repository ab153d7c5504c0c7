package compat

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/responses"
)

// checkKeys checks one decoded openai-go object against the schema it was
// generated from: every key marked required (or constant, like "object" and
// "type") is present, every present key decoded into its field's type, and
// no key is unknown to the SDK (which catches misspelt keys) except those
// named in known.
func checkKeys(t *testing.T, what string, v any, known ...string) {
	t.Helper()
	rv := reflect.ValueOf(v)
	meta := rv.FieldByName("JSON")
	if !meta.IsValid() {
		t.Fatalf("%s: %T has no JSON metadata", what, v)
	}
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		mf := meta.FieldByName(f.Name)
		if !mf.IsValid() {
			continue
		}
		field := mf.Interface().(respjson.Field)
		_, constant := f.Tag.Lookup("default")
		required := strings.Contains(f.Tag.Get("api"), "required") || constant
		switch raw := field.Raw(); {
		case raw == "" && required:
			t.Errorf("%s: required key %q is missing", what, name)
		case raw != "" && raw != "null" && !field.Valid() && !slices.Contains(known, name):
			t.Errorf("%s: key %q = %s does not decode as %s", what, name, raw, f.Type)
		}
	}
	if extra := meta.FieldByName("ExtraFields"); extra.IsValid() && extra.Len() > 0 {
		for _, k := range extra.MapKeys() {
			if slices.Contains(known, k.String()) {
				continue
			}
			t.Errorf("%s: key %q is not in the SDK's schema", what, k.String())
		}
	}
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("openai-go cannot decode %T: %v\n%s", v, err, data)
	}
	return v
}

func TestSDKDecodesChatCompletion(t *testing.T) {
	for _, file := range []string{"chat_completed", "chat_length", "chat_escapes"} {
		t.Run(file, func(t *testing.T) {
			c := decode[openai.ChatCompletion](t, mapResultFile(t, "testdata/result/"+file+".json"))
			checkKeys(t, "chat.completion", c)
			checkKeys(t, "usage", c.Usage)
			checkKeys(t, "usage.prompt_tokens_details", c.Usage.PromptTokensDetails)
			checkKeys(t, "usage.completion_tokens_details", c.Usage.CompletionTokensDetails)
			if len(c.Choices) != 1 {
				t.Fatalf("choices: %d", len(c.Choices))
			}
			checkKeys(t, "choice", c.Choices[0])
			checkKeys(t, "message", c.Choices[0].Message)
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
	// (README.md "Responses that remember"): the SDK computes the first and types
	// metadata as strings only, so the second is checked by hand.
	checkKeys(t, "response", r, "store", "output_text", "background", "metadata")
	checkServiceMetadata(t, r.RawJSON())
	checkKeys(t, "reasoning", r.Reasoning)
	checkKeys(t, "text", r.Text)
	if r.Status != "in_progress" {
		checkKeys(t, "usage", r.Usage)
		checkKeys(t, "usage.input_tokens_details", r.Usage.InputTokensDetails)
		checkKeys(t, "usage.output_tokens_details", r.Usage.OutputTokensDetails)
	}
	for _, item := range r.Output {
		checkMessage(t, item.AsMessage())
	}
}

// checkServiceMetadata checks metadata.service = {session_id, run_id}.
func checkServiceMetadata(t *testing.T, raw string) {
	t.Helper()
	var r struct {
		OutputText *string `json:"output_text"`
		Metadata   struct {
			Service *struct {
				SessionID *string `json:"session_id"`
				RunID     *string `json:"run_id"`
			} `json:"service"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("response: %v", err)
	}
	if r.OutputText == nil {
		t.Errorf("response: output_text is missing")
	}
	if s := r.Metadata.Service; s == nil || s.SessionID == nil || s.RunID == nil {
		t.Errorf("response: metadata.service {session_id, run_id} is missing: %s", raw)
	}
}

func checkMessage(t *testing.T, m responses.ResponseOutputMessage) {
	t.Helper()
	checkKeys(t, "output message", m)
	for _, part := range m.Content {
		checkKeys(t, "output_text", part.AsOutputText())
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
			r := decode[responses.Response](t, mapResultFile(t, "testdata/result/"+c.file+".json"))
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
