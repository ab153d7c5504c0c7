package socket

import (
	"io"
	"net"
	"testing"
)

// TestStalledWriteBlocksNoOne: while a burst's write is blocked on a
// client that does not read (a net.Pipe whose far end reads one byte and
// stops), the Cork's lock is free and a frame another goroutine writes
// (a ping, a close frame) returns at once instead of waiting for the
// stalled write; it goes out after the burst, in order, once the client
// reads. Before, release held the lock for its whole write, so every
// other writer and a close waited on the stalled client.
func TestStalledWriteBlocksNoOne(t *testing.T) {
	near, far := net.Pipe()
	t.Cleanup(func() { near.Close(); far.Close() })
	k := newCork(near)
	k.hold()
	for _, f := range []string{"burst-1;", "burst-2;"} {
		if _, err := k.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	released := make(chan error, 1)
	go func() { released <- k.release() }()
	// One byte read: release's write has begun, and blocks on the rest.
	first := make([]byte, 1)
	if _, err := io.ReadFull(far, first); err != nil {
		t.Fatal(err)
	}
	if !k.mu.TryLock() {
		t.Fatal("release holds the Cork's lock while its write is blocked on the client")
	}
	k.mu.Unlock()
	// A frame from another goroutine (here the test's) is queued, not
	// blocked: Write returns while the burst's write still waits.
	if _, err := k.Write([]byte("close;")); err != nil {
		t.Fatal(err)
	}
	const want = "burst-1;burst-2;close;"
	rest := make([]byte, len(want)-1)
	if _, err := io.ReadFull(far, rest); err != nil {
		t.Fatal(err)
	}
	if got := string(first) + string(rest); got != want {
		t.Fatalf("the client read %q, want %q: the burst first, then what was written during it", got, want)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	k.done()
	// Out of a burst, with no write in flight, a write goes straight out.
	go k.Write([]byte("ping;"))
	got := make([]byte, len("ping;"))
	if _, err := io.ReadFull(far, got); err != nil || string(got) != "ping;" {
		t.Fatalf("out of a burst: %q, %v", got, err)
	}
}

// TestCorkWriteFailureSticks: once a write fails (the client went, or its
// deadline passed), every later write and release fails with it, and no
// frame is written after a cut one.
func TestCorkWriteFailureSticks(t *testing.T) {
	near, far := net.Pipe()
	k := newCork(near)
	far.Close()
	if _, err := k.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed peer succeeded")
	}
	k.hold()
	if _, err := k.Write([]byte("y")); err == nil {
		t.Fatal("a write after a failed one succeeded")
	}
	if err := k.release(); err == nil {
		t.Fatal("release after a failed write succeeded")
	}
	k.done()
}
