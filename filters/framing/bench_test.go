package framing

import "testing"

func BenchmarkChatStreamDelta(b *testing.B) {
	s := NewChatStream(streamChatID, streamCreated, "service")
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = s.AppendDelta(buf[:0], " token")
	}
}

func BenchmarkResponseTextDelta(b *testing.B) {
	s := NewResponseStream(streamResponseID, streamMessageID)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	seq := 0
	for b.Loop() {
		buf = s.AppendTextDelta(buf[:0], seq, " token")
		seq++
	}
}
