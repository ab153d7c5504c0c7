package server

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config/configtest"
)

// TestQuietHostClosesABurstsUpstreamConnections: after a burst of eight
// requests at once, each on its own upstream connection, a host that falls
// quiet closes the idle connections within seconds (heaptrim's quiet
// check, once a second), not after the transport's 90 s idle timeout.
// The upstream is a real server on 127.0.0.1 that counts the connections
// it saw opened and closed.
func TestQuietHostClosesABurstsUpstreamConnections(t *testing.T) {
	const burst = 8
	var opened, closed atomic.Int64
	arrived := make(chan struct{}, burst)
	all := make(chan struct{})
	var once sync.Once
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// Answer only once all of the burst is here, so that each
		// request holds a connection of its own.
		arrived <- struct{}{}
		if len(arrived) == burst {
			once.Do(func() { close(all) })
		}
		<-all
		wholeOf("ok")(w, r)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			closed.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	doc := "provider: {kind: openai, openai: {base_url: " + up.URL + "/v1, model: m, max_attempts: 1}}"
	h := serveConfig(t, loadFile(t, configtest.New(t), doc))

	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", h.URL+"/v1/chat/completions",
				strings.NewReader(`{"model":"service","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer "+tokApp)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", res.StatusCode)
			}
		})
	}
	wg.Wait()
	if n := opened.Load(); n != burst {
		t.Fatalf("the upstream saw %d connections opened, want %d", n, burst)
	}
	// Quiet means no collection for two looks a second apart; the release
	// follows on the next look.
	for deadline := time.Now().Add(15 * time.Second); closed.Load() < burst; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream saw %d of %d idle connections closed 15 s after the burst, want all", closed.Load(), burst)
		}
	}
}
