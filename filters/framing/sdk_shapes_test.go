package framing

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/runedge/runedge/internal/sdkcheck"
	"github.com/runedge/runedge/plugins/runtime"
)

// The frames decode with the official openai-go SDK, key by key against the
// schema it was generated from.

func TestSDKDecodesChatChunks(t *testing.T) {
	var acc openai.ChatCompletionAccumulator
	for i, frame := range chatFrames() {
		chunk := sdkcheck.Decode[openai.ChatCompletionChunk](t, frame)
		sdkcheck.Keys(t, "chunk", chunk)
		for _, c := range chunk.Choices {
			sdkcheck.Keys(t, "chunk choice", c)
			sdkcheck.Keys(t, "delta", c.Delta)
		}
		if i == 0 && (len(chunk.Choices) != 1 || chunk.Choices[0].Delta.Role != "assistant") {
			t.Errorf("first chunk lacks delta.role: %s", frame)
		}
		if !acc.AddChunk(chunk) {
			t.Fatalf("accumulator refused chunk %d: %s", i, frame)
		}
	}
	if got := acc.Choices[0].Message.Content; got != "Hello \"world\"\n\u2028" {
		t.Errorf("accumulated content %q", got)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens != 19 || acc.ID != streamChatID {
		t.Errorf("accumulated %+v", acc.ChatCompletion)
	}
}

func TestSDKDecodesResponseEvents(t *testing.T) { eachMapping(t, testSDKDecodesResponseEvents) }

func testSDKDecodesResponseEvents(t *testing.T, p *runtime.Plugin) {
	want := []string{
		"response.created", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done",
		"response.content_part.done", "response.output_item.done", "response.completed",
	}
	frames := responseFrames(t, p, "testdata/result/responses_completed.json")
	var text strings.Builder
	for i, frame := range frames {
		ev := sdkcheck.Decode[responses.ResponseStreamEventUnion](t, frame)
		if ev.Type != want[i] || ev.SequenceNumber != int64(i) {
			t.Errorf("event %d: type %q seq %d, want %q", i, ev.Type, ev.SequenceNumber, want[i])
		}
		switch e := ev.AsAny().(type) {
		case responses.ResponseCreatedEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Response(t, e.Response)
		case responses.ResponseCompletedEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Response(t, e.Response)
			if e.Response.OutputText() != text.String() {
				t.Errorf("completed text %q, deltas gave %q", e.Response.OutputText(), text.String())
			}
		case responses.ResponseOutputItemAddedEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Message(t, e.Item.AsMessage())
		case responses.ResponseOutputItemDoneEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Message(t, e.Item.AsMessage())
		case responses.ResponseContentPartAddedEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Keys(t, "part", e.Part.AsOutputText())
		case responses.ResponseContentPartDoneEvent:
			sdkcheck.Keys(t, ev.Type, e)
			sdkcheck.Keys(t, "part", e.Part.AsOutputText())
		case responses.ResponseTextDeltaEvent:
			sdkcheck.Keys(t, ev.Type, e)
			text.WriteString(e.Delta)
		case responses.ResponseTextDoneEvent:
			sdkcheck.Keys(t, ev.Type, e)
		default:
			t.Errorf("event %d decoded as %T", i, e)
		}
	}
}

func TestSDKDecodesResponseEndings(t *testing.T) { eachMapping(t, testSDKDecodesResponseEndings) }

func testSDKDecodesResponseEndings(t *testing.T, p *runtime.Plugin) {
	s := NewResponseStream(streamResponseID, streamMessageID)
	ev := sdkcheck.Decode[responses.ResponseStreamEventUnion](t, s.AppendCompleted(nil, 8, mapResultFile(t, p, "testdata/result/responses_incomplete.json")))
	inc, ok := ev.AsAny().(responses.ResponseIncompleteEvent)
	if !ok {
		t.Fatalf("decoded as %T", ev.AsAny())
	}
	sdkcheck.Keys(t, ev.Type, inc)
	sdkcheck.Response(t, inc.Response)
}
