package framing

import (
	"context"
	"os"
	"testing"

	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner/native"
)

// The scripted streams below are shared by the golden test and the
// openai-go test, so the frames the SDK parses are the frames in testdata.

const (
	streamChatID     = "chatcmpl-0123456789abcdefABCDEF"
	streamResponseID = "resp_0123456789abcdefABCDEF"
	streamMessageID  = "msg_0123456789abcdefABCDEF"
	streamCreated    = 1700000000
)

var streamUsage = native.Usage{InputTokens: 12, OutputTokens: 7, TotalTokens: 19}

// chatFrames returns the chunks of a streamed chat reply with usage, built
// into one reused buffer as the host does.
func chatFrames() [][]byte {
	s := NewChatStream(streamChatID, streamCreated, "service")
	var buf []byte
	var frames [][]byte
	add := func(b []byte) {
		frames = append(frames, append([]byte(nil), b...))
		buf = b[:0]
	}
	add(s.AppendRole(buf))
	add(s.AppendDelta(buf, "Hel"))
	add(s.AppendDelta(buf, "lo \"world\"\n\u2028"))
	add(s.AppendFinish(buf, "stop"))
	add(s.AppendUsage(buf, streamUsage))
	return frames
}

// responseFrames returns the events of a streamed response in the order the
// host sends them, with the Response objects mapped by the default mapping
// (p, one of defaultMappings) from
// testdata/result/responses_{in_progress,completed}.json. final names the
// result input of the terminal event.
func responseFrames(t testing.TB, p *runtime.Plugin, final string) [][]byte {
	created := mapResultFile(t, p, "testdata/result/responses_in_progress.json")
	done := mapResultFile(t, p, final)
	s := NewResponseStream(streamResponseID, streamMessageID)
	var frames [][]byte
	seq := 0
	add := func(b []byte) {
		frames = append(frames, b)
		seq++
	}
	add(s.AppendCreated(nil, seq, created))
	add(s.AppendItemAdded(nil, seq))
	add(s.AppendPartAdded(nil, seq))
	add(s.AppendTextDelta(nil, seq, "Hello! "))
	add(s.AppendTextDelta(nil, seq, "How can I help?"))
	const text = "Hello! How can I help?"
	add(s.AppendTextDone(nil, seq, text))
	add(s.AppendPartDone(nil, seq, text))
	add(s.AppendItemDone(nil, seq, text))
	add(s.AppendCompleted(nil, seq, done))
	return frames
}

func mapResultFile(t testing.TB, p *runtime.Plugin, path string) []byte {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Call(context.Background(), runtime.MapResult, in)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}
