package runner_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/openai"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// heldStart is a store whose StartRun waits until released, as a run's
// start waits for its group commit.
type heldStart struct {
	runner.Store
	entered chan struct{}
	release chan struct{}
}

func (s *heldStart) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	close(s.entered)
	<-s.release
	return s.Store.StartRun(ctx, r, newSession, newThread)
}

// TestPreparedRunLetsItsInputGo: a run whose agent writes its upstream
// request ahead (runner.PreparingAgent: the reference agent over the
// openai provider) holds none of its input messages while its start
// commits, only the upstream request; and the run still answers. It fails
// when Start keeps the agent's request until the start has committed.
func TestPreparedRunLetsItsInputGo(t *testing.T) {
	up := httptest.NewServer(mockupstream.Handler())
	defer up.Close()
	p, err := openai.New(openai.Config{BaseURL: up.URL + "/v1", APIKey: "sk-test", Model: "mock-model"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held := &heldStart{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: held, Agent: agent.New(p)})
	if err != nil {
		t.Fatal(err)
	}

	collected := make(chan struct{})
	// The spec is made in the goroutine that starts the run, so that
	// nothing of this test's keeps its input.
	started := make(chan error, 1)
	var h *runner.Handle
	go func() {
		var err error
		h, err = svc.Start(t.Context(), agentSpec(collected))
		started <- err
	}()
	<-held.entered
	deadline := time.Now().Add(5 * time.Second)
	for gone := false; !gone; {
		runtime.GC()
		select {
		case <-collected:
			gone = true
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				close(held.release)
				<-started
				t.Fatal("the run's input messages stayed alive while its start committed")
			}
		}
	}
	close(held.release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	res, _, err := finish(h)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == "" {
		t.Fatal("the run answered nothing")
	}
}

// agentSpec is a chat run of 400 messages whose array closes collected
// once it is collected.
func agentSpec(collected chan struct{}) runner.StartSpec {
	in := make([]runner.Message, 400)
	for i := range in {
		in[i] = runner.Message{Role: "user", Content: strings.Repeat("history ", 64) + string(rune('a'+i%26))}
	}
	runtime.AddCleanup(&in[0], func(c chan struct{}) { close(c) }, collected)
	sp := spec("", false)
	sp.Request.Input = in
	return sp
}
