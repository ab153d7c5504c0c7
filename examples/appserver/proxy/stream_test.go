package proxy_test

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/examples/appserver/internal/runedgetest"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// tokenDelay makes a ten-token answer take about two seconds.
const tokenDelay = 200 * time.Millisecond

const longPrompt = "one two three four five six seven eight"

// Each SSE event reaches the browser while the run is still going: the
// first one is read, and runedge still reports the run running.
func TestStreamsIncrementally(t *testing.T) {
	rd := runedgetest.Start(t, tokenDelay)
	b := newBrowser(t, rd.URL, 0)
	for _, tc := range []struct{ route, body, last string }{
		{"/api/chat", `{"model":"service","stream":true,"messages":[{"role":"user","content":"` + longPrompt + `"}]}`, "[DONE]"},
		{"/api/responses", `{"model":"service","stream":true,"input":"` + longPrompt + `"}`, `"type":"response.completed"`},
	} {
		t.Run(tc.route, func(t *testing.T) {
			res := b.post(t.Context(), tc.route, tc.body)
			defer res.Body.Close()
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("%d %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			runID := res.Header.Get("X-Service-Run-Id")
			r := bufio.NewReader(res.Body)
			if _, ok := nextEvent(t, r); !ok {
				t.Fatal("no first event")
			}
			if run := rd.Run(runID, tenant); run.Status != runner.StatusRunning {
				t.Fatalf("after the first event the run is %s: the stream was held back", run.Status)
			}
			var events []string
			for {
				data, ok := nextEvent(t, r)
				if !ok {
					break
				}
				events = append(events, data)
			}
			if len(events) < 10 || !strings.Contains(events[len(events)-1], tc.last) {
				t.Fatalf("%d events, last %q", len(events), events[len(events)-1])
			}
			if run := rd.Run(runID, tenant); run.Status != runner.StatusCompleted {
				t.Fatalf("run %s after the stream ended", run.Status)
			}
		})
	}
}

// When the browser goes away mid-stream, runedge cancels exactly that run.
func TestDisconnectCancelsRun(t *testing.T) {
	rd := runedgetest.Start(t, tokenDelay)
	b := newBrowser(t, rd.URL, 0)
	ctx, cancel := context.WithCancel(t.Context())
	res := b.post(ctx, "/api/chat", `{"model":"service","stream":true,"messages":[{"role":"user","content":"`+longPrompt+`"}]}`)
	runID := res.Header.Get("X-Service-Run-Id")
	if _, ok := nextEvent(t, bufio.NewReader(res.Body)); !ok {
		t.Fatal("no first event")
	}
	cancel()
	res.Body.Close()
	run := rd.WaitRun(runID, tenant, func(r runner.Run) bool { return r.Status.Terminal() })
	if run.Status != runner.StatusCancelled || run.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("run %s (%s), want cancelled (client_disconnect)", run.Status, run.StatusReason)
	}
}

// runedge's keepalive comments reach the browser through the proxy: a load
// balancer in front of the app server sees bytes during a silent stream.
func TestKeepalivesPassThrough(t *testing.T) {
	rd := runedgetest.Start(t, 250*time.Millisecond, func(c *config.Config) {
		d := config.Dur(100 * time.Millisecond)
		c.Limits.SSEKeepalive = &d
	})
	b := newBrowser(t, rd.URL, 0)
	res := b.post(t.Context(), "/api/chat", `{"model":"service","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("%d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	comments, data := 0, 0
	for sc.Scan() {
		switch l := sc.Text(); {
		case l == ": keepalive":
			comments++
		case strings.HasPrefix(l, "data: "):
			data++
		}
	}
	if comments < 3 || data != 8 {
		t.Fatalf("%d keepalives and %d data lines through the proxy, want ≥ 3 and 8", comments, data)
	}
}
