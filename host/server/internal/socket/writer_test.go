package socket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestFailedWriteReportsTheClientGone: a turn's write that fails because
// the client left (not at its deadline) calls gone, and not stalled, at
// once: the turn loop must know the connection is over before the turn
// ends, or it starts the events queued behind the turn while the reader
// is still on its way out of the read that met the close.
func TestFailedWriteReportsTheClientGone(t *testing.T) {
	type accepted struct {
		c    *websocket.Conn
		cork *Cork
	}
	got := make(chan accepted, 1)
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, cork, err := Accept(w, r)
		if err != nil {
			return
		}
		got <- accepted{c, cork}
		<-hold
	}))
	defer srv.Close()
	defer close(hold)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := <-got
	client.CloseNow() // the client goes without a close frame

	w := NewWriter(ctx, a.c, a.cork)
	w.SetWriteDeadline(time.Now().Add(10 * time.Second))
	gone, stalled := 0, 0
	w.gone = func() { gone++ }
	w.stalled = func() { stalled++ }
	msg := []byte(`{"type":"response.output_text.delta","delta":"` + strings.Repeat("x", 4096) + `"}`)
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		werr = w.Send(msg)
		if werr == nil {
			time.Sleep(time.Millisecond) // the peer's reset arrives
		}
	}
	if werr == nil {
		t.Fatal("1000 writes to a client that left all succeeded")
	}
	if gone != 1 || stalled != 0 {
		t.Fatalf("a write to a client that left (%v): gone called %d times, stalled %d; want 1 and 0", werr, gone, stalled)
	}
}
