package translate_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// A background response is answered at once with the in-progress Response;
// the run goes on after the handler returns, its client gone or not, and
// its goroutine records the end with the final object.
func TestBackgroundDetaches(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	e, id := startBackground(t, &filtertest.Agent{Gate: gate, Result: runner.Result{Text: "later", FinishReason: "stop"}})
	close(gate)
	e.wantEnded(t, id, runner.StatusCompleted, "")
	calls := e.plugin.Calls(runtime.MapResult)
	if len(calls) != 2 || gjson.Get(calls[0], "status").Str != "in_progress" || gjson.Get(calls[1], "status").Str != "completed" {
		t.Fatalf("map_result calls %q, want the in_progress then the completed Response", calls)
	}
	obj, err := e.runs.Service.History().GetResponse(t.Context(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	if s := gjson.GetBytes(obj.Object, "status").Str; s != "completed" || gjson.GetBytes(obj.Object, "output.0.content.0.text").Str != "later" {
		t.Errorf("stored object %s", obj.Object)
	}
}

// startBackground sends a background response whose agent waits on its
// gate: the reply is the in-progress Response at once, and the run is
// still running after the handler returned and its client went away.
func startBackground(t *testing.T, agent *filtertest.Agent) (*env, string) {
	t.Helper()
	started := make(chan runner.Request, 1)
	agent.Started = started
	e := newEnv(t, agent, envConfig{})
	ctx, leave := context.WithCancel(t.Context())
	_, rec, err := e.do(t, ctx, request{ep: filters.Responses, background: true})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	id := runID(t, rec)
	if rec.Code != 200 || gjson.Get(rec.Body.String(), "status").Str != "in_progress" {
		t.Fatalf("reply %d %s, want 200 and the in_progress Response", rec.Code, rec.Body)
	}
	// The client goes away: the run does not notice.
	leave()
	time.Sleep(50 * time.Millisecond)
	if r := e.runs.Get(t, id); r.Status != runner.StatusRunning {
		t.Fatalf("run %s/%s after its handler returned and its client left, want running", r.Status, r.StatusReason)
	}
	select {
	case r := <-e.runs.Ended:
		t.Fatalf("run ended before its agent did: %s/%s", r.Status, r.StatusReason)
	default:
	}
	return e, id
}

// Only the cancel path ends a background run early.
func TestBackgroundCancelledByCancelOnly(t *testing.T) {
	t.Parallel()
	e, id := startBackground(t, &filtertest.Agent{Gate: make(chan struct{})})
	if _, err := e.runs.Service.Cancel(t.Context(), runner.Scope{TenantID: "acme"}, id); err != nil {
		t.Fatal(err)
	}
	e.wantEnded(t, id, runner.StatusCancelled, runner.ReasonCancelRequested)
}

// A streamed background response goes to the run's event log, which the
// client follows: the same events, numbered from 0, as a direct stream.
func TestBackgroundStreamFollowsLog(t *testing.T) {
	t.Parallel()
	agent := &filtertest.Agent{Events: filtertest.Deltas("a", "b"), Result: runner.Result{Text: "ab", FinishReason: "stop"}}
	e := newEnv(t, agent, envConfig{})
	_, rec, err := e.do(t, t.Context(), request{ep: filters.Responses, stream: true, background: true})
	if err != nil {
		t.Fatal(err)
	}
	checkResponseEvents(t, filtertest.SSE(t, rec.Body.String()), []string{"response.created",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"})
	e.wantEnded(t, runID(t, rec), runner.StatusCompleted, "")
	// One in-progress Response, mapped once: the same object is the
	// stream's response.created.
	calls := e.plugin.Calls(runtime.MapResult)
	if len(calls) != 2 || gjson.Get(calls[0], "status").Str != "in_progress" || gjson.Get(calls[1], "status").Str != "completed" {
		t.Fatalf("%d map_result calls %q, want the in_progress then the completed Response", len(calls), calls)
	}
}
