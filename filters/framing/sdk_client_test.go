package framing

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/plugins/runtime"
)

// fakeHost stands in for the runedge host behind openai-go's HTTP client:
// the SDK's real request body goes through the default mapping's
// map_request (p, native or wasm), a canned run answers with text, and the
// reply is built with its map_result or the stream builders and framed as
// SSE. No network is involved.
type fakeHost struct {
	p      *runtime.Plugin
	text   []string // the run's output, in the pieces it streams
	mapped []byte   // the last map_request output
}

func (h *fakeHost) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	endpoint, id := abi.EndpointChat, streamChatID
	if strings.HasSuffix(req.URL.Path, "/responses") {
		endpoint, id = abi.EndpointResponses, streamResponseID
	}
	h.mapped, err = h.p.Call(req.Context(), runtime.MapRequest, envelope(endpoint, string(body)))
	if err != nil {
		var ie *runtime.InputError
		if !errors.As(err, &ie) {
			return nil, err
		}
		msg := []byte(`{"error":{"message":`)
		msg = guestjson.AppendString(msg, ie.Message)
		msg = append(msg, `,"type":"invalid_request_error","param":`...)
		msg = guestjson.AppendString(msg, ie.Param)
		msg = append(msg, `,"code":`...)
		msg = append(guestjson.AppendString(msg, ie.Code), "}}"...)
		return reply(http.StatusBadRequest, "application/json", msg), nil
	}
	echo := gjson.GetBytes(h.mapped, "echo").Raw
	text := strings.Join(h.text, "")
	result := func(status string) []byte {
		in := `{"endpoint":"` + endpoint + `","id":"` + id + `","message_id":"` + streamMessageID +
			`","created":` + strconv.Itoa(streamCreated) + `,"model":"service","status":"` + status +
			`","result":{"text":` + string(guestjson.AppendString(nil, text)) +
			`,"finish_reason":"stop","usage":{"input_tokens":12,"output_tokens":7,"total_tokens":19}},"echo":` + echo + `}`
		out, err := h.p.Call(req.Context(), runtime.MapResult, []byte(in))
		if err != nil {
			panic(err)
		}
		return out
	}
	if !gjson.GetBytes(h.mapped, "request.stream").Bool() {
		return reply(http.StatusOK, "application/json", result("completed")), nil
	}

	var sse bytes.Buffer
	if endpoint == abi.EndpointChat {
		s := NewChatStream(id, streamCreated, "service")
		data := func(b []byte) { sse.WriteString("data: "); sse.Write(b); sse.WriteString("\n\n") }
		data(s.AppendRole(nil))
		for _, piece := range h.text {
			data(s.AppendDelta(nil, piece))
		}
		data(s.AppendFinish(nil, "stop"))
		if gjson.Get(echo, "include_usage").Bool() {
			data(s.AppendUsage(nil, streamUsage))
		}
		sse.WriteString("data: [DONE]\n\n")
	} else {
		s := NewResponseStream(id, streamMessageID)
		seq := 0
		event := func(b []byte) {
			sse.WriteString("event: " + gjson.GetBytes(b, "type").Str + "\ndata: ")
			sse.Write(b)
			sse.WriteString("\n\n")
			seq++
		}
		event(s.AppendCreated(nil, seq, result("in_progress")))
		event(s.AppendItemAdded(nil, seq))
		event(s.AppendPartAdded(nil, seq))
		for _, piece := range h.text {
			event(s.AppendTextDelta(nil, seq, piece))
		}
		event(s.AppendTextDone(nil, seq, text))
		event(s.AppendPartDone(nil, seq, text))
		event(s.AppendItemDone(nil, seq, text))
		event(s.AppendCompleted(nil, seq, result("completed")))
	}
	return reply(http.StatusOK, "text/event-stream", sse.Bytes()), nil
}

func reply(status int, contentType string, body []byte) *http.Response {
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {contentType}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}
}

func newClient(h *fakeHost) openai.Client {
	return openai.NewClient(option.WithBaseURL("http://runedge.test/v1/"), option.WithAPIKey("token"),
		option.WithHTTPClient(h), option.WithMaxRetries(0))
}

var answerSchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"a": map[string]any{"type": "integer"}},
	"required":             []string{"a"},
	"additionalProperties": false,
}

func TestSDKChatCompletion(t *testing.T) { eachMapping(t, testSDKChatCompletion) }

func testSDKChatCompletion(t *testing.T, p *runtime.Plugin) {
	h := &fakeHost{p: p, text: []string{`{"a":`, `1}`}}
	client := newClient(h)
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "service",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Answer as JSON."), openai.UserMessage("a?")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: answerSchema, Strict: openai.Bool(true)},
		}},
		MaxCompletionTokens: openai.Int(50),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != `{"a":1}` || c.Usage.TotalTokens != 19 {
		t.Errorf("completion %+v", c)
	}
	want := `{"input":[{"role":"system","content":"Answer as JSON."},{"role":"user","content":"a?"}],` +
		`"output_schema":{"additionalProperties":false,"properties":{"a":{"type":"integer"}},"required":["a"],"type":"object"},` +
		`"schema_name":"answer","max_output_tokens":50}`
	if got := gjson.GetBytes(h.mapped, "request").Raw; got != want {
		t.Errorf("native request\n got: %s\nwant: %s", got, want)
	}
}

func TestSDKChatStream(t *testing.T) { eachMapping(t, testSDKChatStream) }

func testSDKChatStream(t *testing.T, p *runtime.Plugin) {
	h := &fakeHost{p: p, text: []string{"Hel", "lo"}}
	client := newClient(h)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "service",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator refused %s", stream.Current().RawJSON())
		}
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks != 5 || acc.Choices[0].Message.Content != "Hello" || acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens != 19 {
		t.Errorf("%d chunks accumulated to %+v", chunks, acc.ChatCompletion)
	}
}

func TestSDKChatInvalid(t *testing.T) { eachMapping(t, testSDKChatInvalid) }

func testSDKChatInvalid(t *testing.T, p *runtime.Plugin) {
	client := newClient(&fakeHost{p: p})
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "service",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		N:        openai.Int(2),
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" || apiErr.Code != "unsupported_parameter" {
		t.Errorf("want a 400 unsupported_parameter on n, got %v", err)
	}
}

func TestSDKResponse(t *testing.T) { eachMapping(t, testSDKResponse) }

func testSDKResponse(t *testing.T, p *runtime.Plugin) {
	h := &fakeHost{p: p, text: []string{`{"a":1}`}}
	client := newClient(h)
	r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "service",
		Instructions: openai.String("Answer as JSON."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("a?", responses.EasyInputMessageRoleUser),
		}},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "answer", Schema: answerSchema},
		}},
		Metadata: shared.Metadata{"ticket": "T-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// metadata.service is an object (the service's contract), which
	// openai-go's string-valued Metadata map cannot hold: the caller's own
	// keys are read from the raw JSON.
	if r.OutputText() != `{"a":1}` || r.Instructions.OfString != "Answer as JSON." ||
		gjson.Get(r.RawJSON(), "metadata.ticket").Str != "T-1" ||
		r.Text.Format.Type != "json_schema" || r.Usage.TotalTokens != 19 || r.Status != "completed" {
		t.Errorf("response %s", r.RawJSON())
	}
	if got := gjson.GetBytes(h.mapped, "request.schema_name").Str; got != "answer" {
		t.Errorf("schema_name %q in %s", got, h.mapped)
	}
}

func TestSDKResponseStream(t *testing.T) { eachMapping(t, testSDKResponseStream) }

func testSDKResponseStream(t *testing.T, p *runtime.Plugin) {
	client := newClient(&fakeHost{p: p, text: []string{"Hel", "lo"}})
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "service",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	var types []string
	var text string
	var final responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch e := ev.AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text += e.Delta
		case responses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "response.created response.output_item.added response.content_part.added response.output_text.delta " +
		"response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed"
	if strings.Join(types, " ") != want {
		t.Errorf("events %v", types)
	}
	if text != "Hello" || final.OutputText() != "Hello" {
		t.Errorf("deltas %q, final %q", text, final.OutputText())
	}
}

// envelope wraps a client body in the map_request input the host builds.
func envelope(endpoint, body string) []byte {
	in := abi.RequestInput{Endpoint: endpoint, TenantID: "ten_1",
		Actor: abi.Actor{ID: "u_1", Type: "user", Name: "Ada"}, Body: []byte(body)}
	return in.AppendJSON(nil)
}
