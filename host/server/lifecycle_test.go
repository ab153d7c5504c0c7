package server

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// streamUntilFirstEvent opens a stream with its own transport (no pooled
// connections left behind) and returns once the first event arrived.
func streamUntilFirstEvent(t *testing.T, h *harness, path, reqBody string, headers ...string) (*http.Response, *bufio.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", h.URL+path, strings.NewReader(reqBody))
	req.Header.Set("Authorization", "Bearer "+tokApp)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		cancel()
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	br := bufio.NewReader(res.Body)
	if _, err := br.ReadString('\n'); err != nil {
		cancel()
		t.Fatal(err)
	}
	return res, br, cancel
}

func TestClientDisconnectCancelsExactlyItsRun(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(30 * time.Millisecond) })
	long := `{"model":"service","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 300) + `"}]}`
	// Warm up so that lazily started goroutines are counted in the baseline.
	body(t, h.do("POST", "/v1/chat/completions", chatBody))
	http.DefaultClient.CloseIdleConnections()
	baseline := runtime.NumGoroutine()

	// A second stream keeps going while the first one's client leaves.
	otherRes, otherBody, otherCancel := streamUntilFirstEvent(t, h, "/v1/chat/completions", long)
	defer otherCancel()
	res, _, cancel := streamUntilFirstEvent(t, h, "/v1/chat/completions", long)
	id := checkRunHeaders(t, res.Header)
	cancel()
	res.Body.Close()

	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("disconnected run recorded %s/%s", r.Status, r.StatusReason)
	}
	other := h.run(checkRunHeaders(t, otherRes.Header))
	if other.Status != runner.StatusRunning {
		t.Fatalf("the other run was affected: %+v", other)
	}
	if _, err := otherBody.ReadString('\n'); err != nil {
		t.Fatalf("the other stream stopped: %v", err)
	}
	otherCancel()
	otherRes.Body.Close()
	h.waitRun(other.ID, func(r runner.Run) bool { return r.Status.Terminal() })

	// Nothing of either run is left running: agent, provider, handler.
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left, baseline %d:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
	if h.srv.Runs().InFlight() != 0 {
		t.Fatalf("%d runs still in flight", h.srv.Runs().InFlight())
	}
}

func TestShutdownCancelsRunsAfterGrace(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(50 * time.Millisecond)
		c.Limits.ShutdownGrace = config.Dur(300 * time.Millisecond)
	})
	short := h.do("POST", "/v1/chat/completions", chatBody) // finished before shutdown
	shortID := checkRunHeaders(t, short.Header)
	body(t, short)

	res, br, cancel := streamUntilFirstEvent(t, h, "/v1/responses",
		`{"model":"service","stream":true,"input":"`+strings.Repeat("word ", 300)+`"}`)
	defer cancel()
	id := checkRunHeaders(t, res.Header)
	done := make(chan error, 1)
	go func() { done <- h.shutdown() }()
	evs := readEvents(t, br)
	res.Body.Close()
	last := evs[len(evs)-1]
	if last.Event != "error" || gjson.Get(last.Data, "code").Str != "unavailable" {
		t.Fatalf("last event of a stream cut by shutdown: %+v", last)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	st, err := sqlite.Open(context.Background(), h.cfg.Path(h.cfg.Store.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for want, rid := range map[runner.Status]string{runner.StatusCancelled: id, runner.StatusCompleted: shortID} {
		r, err := st.GetRun(context.Background(), "", rid)
		if err != nil || r.Status != want {
			t.Fatalf("run %s: %+v %v, want %s", rid, r, err, want)
		}
		if want == runner.StatusCancelled && r.StatusReason != runner.ReasonShutdown {
			t.Fatalf("reason %q", r.StatusReason)
		}
	}
	running, _, err := st.ListRuns(context.Background(), runner.ListQuery{Status: runner.StatusRunning})
	if err != nil || len(running) != 0 {
		t.Fatalf("runs left running after shutdown: %v %v", running, err)
	}
}

func TestShutdownLetsShortRunsFinish(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond)
		c.Limits.ShutdownGrace = config.Dur(5 * time.Second)
	})
	res, br, cancel := streamUntilFirstEvent(t, h, "/v1/chat/completions",
		`{"model":"service","stream":true,"messages":[{"role":"user","content":"a b c d e f g h"}]}`)
	defer cancel()
	go h.shutdown()
	evs := readEvents(t, br)
	res.Body.Close()
	if evs[len(evs)-1].Data != "[DONE]" {
		t.Fatalf("stream in flight did not finish within the grace period: %+v", evs[len(evs)-1])
	}
}

func TestStartupMarksInterruptedRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().Unix()
	if err := st.StartRun(ctx, &runner.Run{ID: "run_crash", Object: "run", Status: runner.StatusRunning,
		SessionID: "sess_crash", ThreadID: "thread_crash", TenantID: "default", Endpoint: "responses",
		Model: "service", CreatedAt: now, StartedAt: &now}, true, true); err != nil {
		t.Fatal(err)
	}
	st.Close()
	h := start(t, func(c *config.Config) { c.Store.Path = path })
	r := h.run("run_crash")
	if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("crashed run: %+v", r)
	}
}
