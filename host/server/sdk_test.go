package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/runedge/runedge/host/config"
)

// The official OpenAI Go SDK as the client, for all three endpoints,
// streaming and structured output included, on its strict paths.
func TestOpenAIGoSDK(t *testing.T) { eachMapping(t, testOpenAIGoSDK) }

func testOpenAIGoSDK(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	ctx := context.Background()
	client := openai.NewClient(
		option.WithBaseURL(h.URL+"/v1/"),
		option.WithAPIKey(tokApp),
		option.WithHeader("x-service-actor-id", "sdk-user"),
		option.WithHeader("x-service-tenant-id", "sdk-tenant"),
		option.WithMaxRetries(0),
	)

	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].ID != "service" || page.Data[0].OwnedBy == "" {
			t.Fatalf("models: %+v", page.Data)
		}
		m, err := client.Models.Get(ctx, "service")
		if err != nil || m.ID != "service" || m.Object != "model" || m.Created != page.Data[0].Created || m.OwnedBy != page.Data[0].OwnedBy {
			t.Fatalf("models.retrieve: %+v, %v", m, err)
		}
		_, err = client.Models.Get(ctx, "gpt-4o")
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Param != "model" {
			t.Fatalf("models.retrieve of another model: want 404 model_not_found, got %v", err)
		}
		anon := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
		if _, err = anon.Models.Get(ctx, "service"); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
			t.Fatalf("models.retrieve without a valid token: want 401, got %v", err)
		}
	})

	t.Run("chat", func(t *testing.T) {
		var raw *http.Response
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "service",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello SDK")},
		}, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].Message.Content != "You said: Hello SDK" || c.Choices[0].FinishReason != "stop" ||
			c.Usage.TotalTokens == 0 || c.Object != "chat.completion" {
			t.Fatalf("completion: %+v", c)
		}
		r := h.run(checkRunHeaders(t, raw.Header))
		if r.Actor.ID != "sdk-user" || r.TenantID != "sdk-tenant" {
			t.Fatalf("attribution: %+v", r)
		}
	})

	t.Run("chat stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         "service",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream me please")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "You said: stream me please" {
			t.Fatalf("accumulated %q", got)
		}
		if acc.Usage.TotalTokens == 0 || acc.Choices[0].FinishReason != "stop" {
			t.Fatalf("usage %+v finish %q", acc.Usage, acc.Choices[0].FinishReason)
		}
	})

	t.Run("chat structured", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "service",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Ada Lovelace")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: "person", Strict: openai.Bool(true), Schema: personSchema,
				}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPerson(t, c.Choices[0].Message.Content)
	})

	t.Run("responses", func(t *testing.T) {
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model:        "service",
			Instructions: openai.String("Be brief."),
			Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello responses")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "You said: Hello responses" || r.Status != "completed" || r.Usage.TotalTokens == 0 {
			t.Fatalf("response: %+v", r)
		}
	})

	t.Run("responses stream", func(t *testing.T) {
		stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: "service",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("list input, streamed", responses.EasyInputMessageRoleUser),
			}},
		})
		var deltas strings.Builder
		var completed *responses.Response
		var types []string
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			switch ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.AsResponseOutputTextDelta().Delta)
			case "response.completed":
				r := ev.AsResponseCompleted().Response
				completed = &r
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if deltas.String() != "You said: list input, streamed" || completed == nil ||
			completed.OutputText() != deltas.String() {
			t.Fatalf("deltas %q completed %+v (events %v)", deltas.String(), completed, types)
		}
	})

	t.Run("responses structured", func(t *testing.T) {
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: "service",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Ada Lovelace")},
			Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
				OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
					Name: "person", Strict: openai.Bool(true), Schema: personSchema,
				},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPerson(t, r.OutputText())
	})

	t.Run("errors", func(t *testing.T) {
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "gpt-4o",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
		})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Param != "model" {
			t.Fatalf("want model_not_found, got %v", err)
		}
		// Fields the SDK sends when a caller sets them: those that change
		// the answer are refused by name, never dropped; sampling hints
		// are accepted, and checked as OpenAI checks them.
		for _, c := range []struct {
			name        string
			set         func(*openai.ChatCompletionNewParams)
			status      int
			code, param string
		}{
			{"logprobs", func(p *openai.ChatCompletionNewParams) { p.Logprobs = openai.Bool(true) }, 400, "unsupported_parameter", "logprobs"},
			{"stop", func(p *openai.ChatCompletionNewParams) {
				p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"Observation:"}}
			}, 400, "unsupported_parameter", "stop"},
			{"temperature out of range", func(p *openai.ChatCompletionNewParams) { p.Temperature = openai.Float(2.5) }, 400, "invalid_body", "temperature"},
			{"hints", func(p *openai.ChatCompletionNewParams) {
				p.Temperature, p.TopP, p.Seed, p.User = openai.Float(0.2), openai.Float(0.9), openai.Int(7), openai.String("u-1")
				p.Logprobs = openai.Bool(false)
			}, 200, "", ""},
		} {
			p := openai.ChatCompletionNewParams{Model: "service", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}}
			c.set(&p)
			_, err := client.Chat.Completions.New(ctx, p)
			switch {
			case c.status == 200 && err != nil:
				t.Errorf("%s: %v", c.name, err)
			case c.status != 200 && (!errors.As(err, &apiErr) || apiErr.StatusCode != c.status || apiErr.Code != c.code || apiErr.Param != c.param):
				t.Errorf("%s: want %d %s (param %s), got %v", c.name, c.status, c.code, c.param, err)
			}
		}
		bad := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
		_, err = bad.Models.List(ctx)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Type != "authentication_error" {
			t.Fatalf("want 401, got %v", err)
		}
	})
}

var personSchema = map[string]any{
	"type":                 "object",
	"additionalProperties": false,
	"required":             []string{"name", "born", "fields"},
	"properties": map[string]any{
		"name":   map[string]any{"type": "string"},
		"born":   map[string]any{"type": "integer", "minimum": 1800, "maximum": 1900},
		"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"math", "poetry"}}},
	},
}

func checkPerson(t *testing.T, out string) {
	t.Helper()
	var p struct {
		Name   string   `json:"name"`
		Born   int      `json:"born"`
		Fields []string `json:"fields"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Name == "" || p.Born < 1800 || p.Born > 1900 {
		t.Fatalf("structured output %q does not match the schema: %v", out, err)
	}
}
