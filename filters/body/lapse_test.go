package body

import (
	"context"
	"testing"
	"time"
)

// The gate's one timer gives back each read's bytes once the read has
// held them for its hold, oldest first, and never those of a read that
// ended first; it starts again after a time with no read.
func TestGateLapsesEachReadOnce(t *testing.T) {
	g := NewGate(1000, time.Second)
	take := func(n int64) *held {
		h, err := g.take(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const hold = 300 * time.Millisecond
	slow1, fast, slow2 := take(100), take(10), take(1)
	g.startRead(slow1, hold)
	g.startRead(fast, hold)
	time.Sleep(hold / 3)
	g.startRead(slow2, hold)
	if !g.endRead(fast) {
		t.Fatal("a read that ended before its hold was given back")
	}
	if got := g.InFlight(); got != 111 {
		t.Fatalf("in flight before any hold passed: %d, want 111", got)
	}
	waitInFlight(t, g, 11) // slow1 given back, fast still held by its request
	waitInFlight(t, g, 10) // slow2's turn
	if g.endRead(slow1) || g.endRead(slow2) {
		t.Fatal("a read given back by the lapse ended as if it held its bytes")
	}
	fast.release()

	// Idle, the timer is not armed; the next read arms it again.
	time.Sleep(hold / 2)
	again := take(5)
	g.startRead(again, hold)
	waitInFlight(t, g, 0)
	if g.endRead(again) {
		t.Fatal("the read after an idle time was not given back")
	}
}

func waitInFlight(t *testing.T, g *Gate, want int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); g.InFlight() != want; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("in flight %d, want %d", g.InFlight(), want)
		}
	}
}
