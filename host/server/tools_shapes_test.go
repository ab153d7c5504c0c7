package server

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner/schema"
)

// openAPI compiles the definition name of testdata/openapi/tools.json, the
// tool-call shapes of OpenAI's OpenAPI description.
func openAPI(t *testing.T, name string) *schema.Schema {
	return openAPIDef(t, "testdata/openapi/tools.json", name)
}

// openAPIDef compiles definition name of file, a subset of OpenAI's OpenAPI
// description restated as JSON Schema with its definitions under $defs.
func openAPIDef(t *testing.T, file, name string) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["$ref"] = "#/$defs/" + name
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func conforms(t *testing.T, s *schema.Schema, what, doc string) {
	t.Helper()
	if err := s.Validate([]byte(doc)); err != nil {
		t.Fatalf("%s does not match OpenAI's description: %v\n%s", what, err, doc)
	}
}

const (
	toolChatBody = `{"model":"service","messages":[{"role":"user","content":"get_weather Paris"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	toolResponsesBody = `{"model":"service","input":"get_weather Paris",` +
		`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}]`
)

// The tool-call replies, whole and streamed, on both endpoints: golden
// files, and every body and event checked against OpenAI's description.
func TestToolShapes(t *testing.T) { eachMapping(t, testToolShapes) }

func testToolShapes(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)

	t.Run("chat", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", toolChatBody+`}`)
		b := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, b)
		}
		conforms(t, openAPI(t, "CreateChatCompletionResponse"), "chat.completion", string(b))
		if gjson.GetBytes(b, "choices.0.message.content").Type != gjson.Null || gjson.GetBytes(b, "choices.0.finish_reason").Str != "tool_calls" {
			t.Fatalf("completion %s", b)
		}
		golden(t, "tool_chat_completion.json", b)
	})

	t.Run("chat stream", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", toolChatBody+`,"stream":true}`)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		evs := readEvents(t, res.Body)
		res.Body.Close()
		chunk := openAPI(t, "CreateChatCompletionStreamResponse")
		var frames []string
		var args strings.Builder
		for _, e := range evs {
			frames = append(frames, e.Data)
			if e.Data == "[DONE]" {
				continue
			}
			conforms(t, chunk, "chat.completion.chunk", e.Data)
			args.WriteString(gjson.Get(e.Data, "choices.0.delta.tool_calls.0.function.arguments").Str)
		}
		if args.String() != `{"city":"Paris"}` || !strings.Contains(evs[len(evs)-2].Data, `"finish_reason":"tool_calls"`) {
			t.Fatalf("arguments %q, stream %v", args.String(), frames)
		}
		golden(t, "tool_chat_stream.txt", []byte(strings.Join(frames, "\n")))
	})

	t.Run("responses", func(t *testing.T) {
		res := h.do("POST", "/v1/responses", toolResponsesBody+`}`)
		b := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, b)
		}
		conforms(t, openAPI(t, "Response"), "response", string(b))
		if gjson.GetBytes(b, "output.#").Int() != 1 || gjson.GetBytes(b, "output.0.type").Str != "function_call" {
			t.Fatalf("response %s", b)
		}
		golden(t, "tool_response.json", b)
	})

	t.Run("responses stream", func(t *testing.T) {
		res := h.do("POST", "/v1/responses", toolResponsesBody+`,"stream":true}`)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		evs := readEvents(t, res.Body)
		res.Body.Close()
		byType := map[string]string{
			"response.output_item.added":             "ResponseOutputItemAddedEvent",
			"response.output_item.done":              "ResponseOutputItemAddedEvent",
			"response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
			"response.function_call_arguments.done":  "ResponseFunctionCallArgumentsDoneEvent",
		}
		var frames []string
		for i, e := range evs {
			frames = append(frames, e.Event+" "+e.Data)
			if seq := gjson.Get(e.Data, "sequence_number").Int(); int(seq) != i || gjson.Get(e.Data, "type").Str != e.Event {
				t.Fatalf("event %d: %s %s", i, e.Event, e.Data)
			}
			if def, ok := byType[e.Event]; ok {
				conforms(t, openAPI(t, def), e.Event, e.Data)
			}
			if e.Event == "response.completed" {
				conforms(t, openAPI(t, "Response"), "response", gjson.Get(e.Data, "response").Raw)
			}
		}
		golden(t, "tool_response_stream.txt", []byte(strings.Join(frames, "\n")))
	})
}
