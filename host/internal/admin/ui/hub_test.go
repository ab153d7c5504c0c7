package ui

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// A page that does not read its stream is dropped, not waited for, and
// told to reload; publishing never blocks the run path.
func TestHubDropsSlowSubscriber(t *testing.T) {
	h := NewHub()
	s := h.subscribe()
	start := time.Now()
	for range subscriberBuffer + 10 {
		h.RunStarted(&runner.Run{ID: "run_x", Status: runner.StatusRunning})
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing to a stuck subscriber took %v", d)
	}
	select {
	case <-s.done:
	default:
		t.Fatal("slow subscriber still subscribed")
	}
	if !s.slow {
		t.Fatal("slow subscriber not marked slow")
	}
	if len(h.subs) != 0 {
		t.Fatalf("%d subscribers left", len(h.subs))
	}
}

// The handler of a dropped subscriber ends its stream with a reload event.
func TestStreamReloadHint(t *testing.T) {
	u := New(Config{Backend: oneAdmin{}}, NewHub())
	id, _ := u.sessions.open("ops", [sha256.Size]byte{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/ui/api/stream", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: id})
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); u.stream(rec, req) }()
	// Wait for the subscription, then flood it while the handler is held
	// on nothing: the recorder never blocks, so drop it by hand as a full
	// buffer would.
	deadline := time.Now().Add(5 * time.Second)
	for {
		u.hub.mu.Lock()
		var sub *subscriber
		for s := range u.hub.subs {
			sub = s
		}
		if sub != nil {
			sub.slow = true
			u.hub.drop(sub)
		}
		u.hub.mu.Unlock()
		if sub != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no subscription")
		}
		time.Sleep(5 * time.Millisecond)
	}
	<-done
	if b := rec.Body.String(); !strings.HasSuffix(b, "event: reload\ndata: {}\n\n") {
		t.Fatalf("stream: %q", b)
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
}

// oneAdmin is a Backend whose one admin token is "ops" with the zero hash.
type oneAdmin struct{ Backend }

func (oneAdmin) AdminTokenValid(name string, hash [sha256.Size]byte) bool {
	return name == "ops" && hash == [sha256.Size]byte{}
}

// BenchmarkHubPublish is what the live stream costs each run start and
// end: nobody watching (the common case), and one page watching (the
// run is encoded once per event, whatever the number of pages).
func BenchmarkHubPublish(b *testing.B) {
	run := &runner.Run{ID: "run_abcdefghijklmnopqrstuvwxyz", Object: "run", Status: runner.StatusRunning,
		SessionID: "sess_abcdefghijklmnopqrstuvwxyz", ThreadID: "thread_abcdefghijklmnopqrstuvwxyz",
		Actor: runner.Actor{ID: "u-1", Type: "user", Name: "Ada"}, TenantID: "acme", Endpoint: "chat.completions", Model: "service"}
	b.Run("no-subscriber", func(b *testing.B) {
		h := NewHub()
		b.ReportAllocs()
		for b.Loop() {
			h.RunStarted(run)
		}
	})
	b.Run("one-subscriber", func(b *testing.B) {
		h := NewHub()
		s := h.subscribe()
		b.ReportAllocs()
		for b.Loop() {
			h.RunStarted(run)
			<-s.ch // the page's side, inline: the subscriber never falls behind
		}
	})
}
