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
