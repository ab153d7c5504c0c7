package framing

import "testing"

// The stream builders run once per streamed token natively; with a reused
// buffer they must not allocate at all.
func TestStreamBuildersDoNotAllocate(t *testing.T) {
	chat := NewChatStream(streamChatID, streamCreated, "service")
	resp := NewResponseStream(streamResponseID, streamMessageID)
	response := mapResultFile(t, defaultMappings[0].load(t), "testdata/result/responses_completed.json")
	buf := make([]byte, 0, 4096)
	for name, f := range map[string]func(){
		"AppendRole":      func() { buf = chat.AppendRole(buf[:0]) },
		"AppendDelta":     func() { buf = chat.AppendDelta(buf[:0], "some \"token\"\n") },
		"AppendFinish":    func() { buf = chat.AppendFinish(buf[:0], "stop") },
		"AppendUsage":     func() { buf = chat.AppendUsage(buf[:0], streamUsage) },
		"AppendCreated":   func() { buf = resp.AppendCreated(buf[:0], 0, response) },
		"AppendItemAdded": func() { buf = resp.AppendItemAdded(buf[:0], 1) },
		"AppendPartAdded": func() { buf = resp.AppendPartAdded(buf[:0], 2) },
		"AppendTextDelta": func() { buf = resp.AppendTextDelta(buf[:0], 3, "some \"token\"\n") },
		"AppendTextDone":  func() { buf = resp.AppendTextDone(buf[:0], 4, "text") },
		"AppendPartDone":  func() { buf = resp.AppendPartDone(buf[:0], 5, "text") },
		"AppendItemDone":  func() { buf = resp.AppendItemDone(buf[:0], 6, "text") },
		"AppendCompleted": func() { buf = resp.AppendCompleted(buf[:0], 7, response) },
		"AppendError":     func() { buf = resp.AppendError(buf[:0], 8, "api_error", "provider_error", "failed", "") },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocates %.0f times per call", name, n)
		}
	}
}
