package runner

import (
	"context"
	"testing"
)

// TestEventsBufferedOnlyWhenStreaming: emit sends on events only for a
// streaming run, so only that one pays for a buffer (half a kilobyte per
// request otherwise).
func TestEventsBufferedOnlyWhenStreaming(t *testing.T) {
	s := &Service{}
	for _, tc := range []struct {
		stream bool
		want   int
	}{{false, 0}, {true, 16}} {
		h := newHandle(context.Background(), s, Run{}, tc.stream)
		if got := cap(h.events); got != tc.want {
			t.Errorf("stream=%v: events buffer %d, want %d", tc.stream, got, tc.want)
		}
		h.discard()
	}
}

// BenchmarkEmit is a stream's hand-off of one event from the agent to the
// consumer, which reads as the edge does: whatever is waiting, in bursts
// (the agent decodes a burst of chunks faster than they are framed).
func BenchmarkEmit(b *testing.B) {
	h := newHandle(context.Background(), &Service{}, Run{}, true)
	defer h.discard()
	done := make(chan struct{})
	go func() {
		for range h.events {
		}
		close(done)
	}()
	ev := Event{Delta: "x"}
	for b.Loop() {
		if err := h.emit(ev); err != nil {
			b.Fatal(err)
		}
	}
	close(h.events)
	<-done
}
