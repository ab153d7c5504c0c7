package openai_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReleaseClosesWhatABurstLeft: Release closes the idle upstream
// connections a burst opened (eight calls at once, a connection each), and
// the upstream, a real server on 127.0.0.1, sees them closed; a trickle
// after it (one call, one connection) keeps its connection warm through
// the next Release.
func TestReleaseClosesWhatABurstLeft(t *testing.T) {
	const burst = 8
	arrived := make(chan struct{}, burst)
	all := make(chan struct{})
	var once sync.Once
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// The burst's calls are answered once all are here, so each
		// holds a connection of its own; later calls at once.
		select {
		case arrived <- struct{}{}:
			if len(arrived) == burst {
				once.Do(func() { close(all) })
			}
			<-all
		default:
		}
		answers("ok")(w, r)
	}))
	var opened, closed atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p := newProvider(t, srv.URL+"/v1", nil)
	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			if _, _, err := generate(t, p, ask("hi", false)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := opened.Load(); n != burst {
		t.Fatalf("%d connections opened for %d calls at once, want %d", n, burst, burst)
	}
	if !p.Release() {
		t.Fatal("Release after a burst of 8 connections = false, want true")
	}
	waitFor(t, "the burst's connections closed", func() bool { return closed.Load() == burst })

	// A trickle: one call at a time, one connection, kept.
	for range 3 {
		if _, _, err := generate(t, p, ask("hi", false)); err != nil {
			t.Fatal(err)
		}
	}
	if p.Release() {
		t.Fatal("Release after a trickle over one connection = true, want false")
	}
	time.Sleep(100 * time.Millisecond)
	if n, c := opened.Load(), closed.Load(); n != burst+1 || c != burst {
		t.Fatalf("after the trickle: %d opened, %d closed; want %d and %d (its connection kept)", n, c, burst+1, burst)
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
	}
}
