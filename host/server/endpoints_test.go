package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

func TestModels(t *testing.T) {
	h := start(t, nil)
	res := h.do("GET", "/v1/models", "")
	b := body(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	data := gjson.GetBytes(b, "data").Array()
	if len(data) != 1 || data[0].Get("id").Str != "service" || data[0].Get("owned_by").Str == "" ||
		data[0].Get("created").Int() == 0 || data[0].Get("object").Str != "model" {
		t.Fatalf("models: %s", b)
	}
	if res.Header.Get("X-Service-Run-Id") != "" {
		t.Fatal("listing models must not create a run")
	}
}

func TestChatCompletion(t *testing.T) { eachMapping(t, testChatCompletion) }

func testChatCompletion(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	res := h.do("POST", "/v1/chat/completions", chatBody,
		"x-service-actor-id", "u-1", "x-service-actor-name", "Ada", "x-service-tenant-id", "t1",
		"x-service-request-id", "req-9", "x-service-correlation-id", "corr-9")
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	runID := checkRunHeaders(t, res.Header)
	if got := gjson.GetBytes(b, "choices.0.message.content").Str; got != "You said: Hello there runedge" {
		t.Fatalf("content %q", got)
	}
	if id := gjson.GetBytes(b, "id").Str; id != "chatcmpl-"+strings.TrimPrefix(runID, "run_") {
		t.Fatalf("completion id %s does not lead to run %s", id, runID)
	}
	golden(t, "chat_completion.json", b)

	r := h.run(runID)
	if r.Status != "completed" || r.TenantID != "t1" || r.Actor.ID != "u-1" || r.Actor.Name != "Ada" ||
		r.Endpoint != "chat.completions" || r.RequestID != "req-9" || r.CorrelationID != "corr-9" ||
		r.Usage == nil || r.Usage.OutputTokens != 5 || r.StartedAt == nil || r.EndedAt == nil {
		t.Fatalf("recorded run: %+v", r)
	}
}

func TestChatStream(t *testing.T) { eachMapping(t, testChatStream) }

func testChatStream(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	for _, usage := range []bool{false, true} {
		reqBody := `{"model":"service","stream":true,"messages":[{"role":"user","content":"one two three"}]}`
		if usage {
			reqBody = `{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"one two three"}]}`
		}
		res := h.do("POST", "/v1/chat/completions", reqBody)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		runID := checkRunHeaders(t, res.Header)
		evs := readEvents(t, res.Body)
		res.Body.Close()
		if evs[len(evs)-1].Data != "[DONE]" {
			t.Fatalf("last event %q", evs[len(evs)-1].Data)
		}
		chunks := evs[:len(evs)-1]
		if gjson.Get(chunks[0].Data, "choices.0.delta.role").Str != "assistant" {
			t.Fatalf("first chunk has no role: %s", chunks[0].Data)
		}
		var text strings.Builder
		var finish string
		usageChunks := 0
		for _, c := range chunks {
			if gjson.Get(c.Data, "object").Str != "chat.completion.chunk" {
				t.Fatalf("chunk object: %s", c.Data)
			}
			if gjson.Get(c.Data, "usage.total_tokens").Exists() {
				usageChunks++
				if n := len(gjson.Get(c.Data, "choices").Array()); n != 0 {
					t.Fatalf("usage chunk with choices: %s", c.Data)
				}
				continue
			}
			if gjson.Get(c.Data, "choices.0.index").Type != gjson.Number {
				t.Fatalf("chunk without choices[].index: %s", c.Data)
			}
			text.WriteString(gjson.Get(c.Data, "choices.0.delta.content").Str)
			if f := gjson.Get(c.Data, "choices.0.finish_reason"); f.Type == gjson.String {
				finish = f.Str
			}
		}
		if text.String() != "You said: one two three" || finish != "stop" {
			t.Fatalf("text %q finish %q", text.String(), finish)
		}
		if want := map[bool]int{false: 0, true: 1}[usage]; usageChunks != want {
			t.Fatalf("include_usage=%v: %d usage chunks", usage, usageChunks)
		}
		if r := h.run(runID); r.Status != "completed" {
			t.Fatalf("run %+v", r)
		}
	}
}

func TestResponses(t *testing.T) { eachMapping(t, testResponses) }

func testResponses(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	// input as a list of message items, the way the Vercel AI SDK and
	// LangChain send it, and text: {}.
	res := h.do("POST", "/v1/responses", `{"model":"service","instructions":"Be brief.","text":{},"stream":false,
		"input":[{"role":"user","content":[{"type":"input_text","text":"What is up"}]}],"metadata":{"k":"v"}}`)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	runID := checkRunHeaders(t, res.Header)
	if gjson.GetBytes(b, "error").Type != gjson.Null || gjson.GetBytes(b, "status").Str != "completed" ||
		gjson.GetBytes(b, "output.0.content.0.text").Str != "You said: What is up" ||
		gjson.GetBytes(b, "instructions").Str != "Be brief." || gjson.GetBytes(b, "metadata.k").Str != "v" ||
		gjson.GetBytes(b, "id").Str != "resp_"+strings.TrimPrefix(runID, "run_") {
		t.Fatalf("response: %s", b)
	}
	golden(t, "response.json", b)
}

func TestResponsesStream(t *testing.T) { eachMapping(t, testResponsesStream) }

func testResponsesStream(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"alpha beta","stream":true}`)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	checkRunHeaders(t, res.Header)
	evs := readEvents(t, res.Body)
	res.Body.Close()
	var order []string
	var text strings.Builder
	for i, e := range evs {
		if typ := gjson.Get(e.Data, "type").Str; typ != e.Event {
			t.Fatalf("event %q carries type %q", e.Event, typ)
		}
		if seq := gjson.Get(e.Data, "sequence_number"); seq.Type != gjson.Number || int(seq.Int()) != i {
			t.Fatalf("event %d has sequence_number %v", i, seq)
		}
		if len(order) == 0 || order[len(order)-1] != e.Event {
			order = append(order, e.Event)
		}
		if e.Event == "response.output_text.delta" {
			text.WriteString(gjson.Get(e.Data, "delta").Str)
		}
	}
	want := []string{"response.created", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("event order:\n got %v\nwant %v", order, want)
	}
	if text.String() != "You said: alpha beta" {
		t.Fatalf("deltas %q", text.String())
	}
	last := evs[len(evs)-1].Data
	if gjson.Get(last, "response.status").Str != "completed" || gjson.Get(last, "response.usage.total_tokens").Int() == 0 {
		t.Fatalf("completed event: %s", last)
	}
	var frames []string
	for _, e := range evs {
		frames = append(frames, e.Event+" "+e.Data)
	}
	golden(t, "response_stream.txt", []byte(strings.Join(frames, "\n")))
}

func TestStructuredOutput(t *testing.T) { eachMapping(t, testStructuredOutput) }

func testStructuredOutput(t *testing.T, mapping func(*config.Config)) {
	h := start(t, mapping)
	schema := `{"type":"object","additionalProperties":false,"required":["name","born","tags"],
		"properties":{"name":{"type":"string"},"born":{"type":"integer","minimum":1800},
		"tags":{"type":"array","items":{"type":"string","enum":["math","poetry"]}}}}`
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"Ada Lovelace",
		"text":{"format":{"type":"json_schema","name":"person","strict":true,"schema":`+schema+`}}}`)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	out := gjson.GetBytes(b, "output.0.content.0.text").Str
	var doc struct {
		Name string   `json:"name"`
		Born int      `json:"born"`
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Born < 1800 || doc.Name == "" {
		t.Fatalf("structured output %q: %v", out, err)
	}
	for _, tag := range doc.Tags {
		if tag != "math" && tag != "poetry" {
			t.Fatalf("tag %q outside the enum", tag)
		}
	}
	// The same through chat completions' response_format.
	res = h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"Ada"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"person","strict":true,"schema":`+schema+`}}}`)
	b = body(t, res)
	if res.StatusCode != 200 || !json.Valid([]byte(gjson.GetBytes(b, "choices.0.message.content").Str)) {
		t.Fatalf("chat structured: %d %s", res.StatusCode, b)
	}
}

// checkRunHeaders asserts the four run headers and returns the run id.
func checkRunHeaders(t *testing.T, h interface{ Get(string) string }) string {
	t.Helper()
	run, sess, thread := h.Get("X-Service-Run-Id"), h.Get("X-Service-Session-Id"), h.Get("X-Service-Thread-Id")
	if !strings.HasPrefix(run, "run_") || !strings.HasPrefix(thread, "thread_") || sess == "" ||
		h.Get("X-Service-Model-Id") != "service" {
		t.Fatalf("run headers: run %q session %q thread %q model %q", run, sess, thread, h.Get("X-Service-Model-Id"))
	}
	return run
}
