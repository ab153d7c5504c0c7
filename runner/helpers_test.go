package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// env is a service on a real SQLite file with the real offline provider.
type env struct {
	svc   *runner.Service
	store *sqlite.Store
	path  string
}

type option func(*runner.ServiceConfig, *offline.Config)

func withDelay(d time.Duration) option {
	return func(_ *runner.ServiceConfig, o *offline.Config) { o.TokenDelay = d }
}

func withConfig(f func(*runner.ServiceConfig)) option {
	return func(c *runner.ServiceConfig, _ *offline.Config) { f(c) }
}

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.db")
	return openEnv(t, path, opts...)
}

func openEnv(t *testing.T, path string, opts ...option) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var ocfg offline.Config
	cfg := runner.ServiceConfig{Store: st}
	for _, o := range opts {
		o(&cfg, &ocfg)
	}
	cfg.Agent = agent.New(offline.New(ocfg))
	svc, err := runner.NewService(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{svc: svc, store: st, path: path}
}

var acme = runner.Scope{TenantID: "acme"}

func spec(text string, stream bool) runner.StartSpec {
	return runner.StartSpec{
		Endpoint: "/v1/chat/completions",
		Model:    "service",
		TenantID: "acme",
		Actor:    runner.Actor{ID: "u1", Type: "user", Name: "Ada"},
		Request: runner.Request{
			Input:  []runner.Message{{Role: "user", Content: text}},
			Stream: stream,
		},
	}
}

// finish does what a run's owner does: drain events, wait, finish.
func finish(h *runner.Handle) (runner.Result, []string, error) {
	var deltas []string
	for ev := range h.Events() {
		deltas = append(deltas, ev.Delta)
	}
	res, err := h.Wait()
	return res, deltas, h.Finish(&res, err)
}

func (e *env) get(t *testing.T, id string) runner.Run {
	t.Helper()
	r, err := e.svc.Get(t.Context(), runner.Scope{Admin: true}, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return r
}

func (e *env) countRuns(t *testing.T) int {
	t.Helper()
	p, err := e.svc.List(t.Context(), runner.Scope{Admin: true}, runner.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Data)
}

func wantState(t *testing.T, r runner.Run, status runner.Status, reason string) {
	t.Helper()
	if r.Status != status || r.StatusReason != reason {
		t.Fatalf("run %s is %s/%s, want %s/%s", r.ID, r.Status, r.StatusReason, status, reason)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

// goroutineBaseline runs one request first, so goroutines started lazily
// (connection pools) exist before the count is taken. The request fails
// at once (/fail), so the provider's token delay does not slow the test.
func (e *env) goroutineBaseline(t *testing.T) int {
	t.Helper()
	h, err := e.svc.Start(t.Context(), spec("/fail warm up", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); !errors.Is(err, runner.ErrProvider) {
		t.Fatalf("warm-up run: %v", err)
	}
	return runtime.NumGoroutine()
}

// waitGoroutines polls until the goroutine count is back to at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func longText(words int) string {
	return strings.Repeat("word ", words)
}

// ctxWithTimeout bounds waits in tests that could otherwise hang.
func ctxWithTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}
