package framing

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/internal/golden"
	"github.com/runedge/runedge/plugins/runtime"
)

// checkGolden compares got with the golden file, or rewrites it with -update
// (internal/golden).
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.Check(t, path, got)
}

// joinFrames writes one frame per line, each checked to be valid compact JSON.
func joinFrames(t *testing.T, frames [][]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, f := range frames {
		var c bytes.Buffer
		if err := json.Compact(&c, f); err != nil || !bytes.Equal(c.Bytes(), f) {
			t.Fatalf("frame is not compact JSON (%v): %s", err, f)
		}
		out.Write(f)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func TestChatStreamGolden(t *testing.T) {
	checkGolden(t, "testdata/stream/chat.golden", joinFrames(t, chatFrames()))
}

func TestResponseStreamGolden(t *testing.T) {
	eachMapping(t, func(t *testing.T, p *runtime.Plugin) {
		checkGolden(t, "testdata/stream/responses.golden",
			joinFrames(t, responseFrames(t, p, "testdata/result/responses_completed.json")))
	})
}

func TestResponseStreamEndingsGolden(t *testing.T) { eachMapping(t, testResponseStreamEndingsGolden) }

func testResponseStreamEndingsGolden(t *testing.T, p *runtime.Plugin) {
	s := NewResponseStream(streamResponseID, streamMessageID)
	frames := [][]byte{
		s.AppendCompleted(nil, 8, mapResultFile(t, p, "testdata/result/responses_incomplete.json")),
		s.AppendError(nil, 3, "api_error", "provider_error", "The provider failed: \"upstream\" closed.", ""),
		s.AppendError(nil, 1, "invalid_request_error", "invalid_body", "bad text.format", "text.format"),
		s.AppendError(nil, 0, "server_error", "", "no code", ""),
	}
	checkGolden(t, "testdata/stream/responses_endings.golden", joinFrames(t, frames))
}

// The terminal event is named after the response's status, since clients
// wait for the event of the outcome.
func TestAppendCompletedEventType(t *testing.T) {
	s := NewResponseStream(streamResponseID, streamMessageID)
	for status, want := range map[string]string{
		"completed":  "response.completed",
		"incomplete": "response.incomplete",
		"failed":     "response.failed",
	} {
		var ev struct{ Type string }
		frame := s.AppendCompleted(nil, 1, []byte(`{"id":"r","status":"`+status+`"}`))
		if err := json.Unmarshal(frame, &ev); err != nil || ev.Type != want {
			t.Errorf("status %s: type %q (%v), want %q", status, ev.Type, err, want)
		}
	}
}
