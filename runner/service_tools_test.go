package runner_test

import (
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

// A run whose answer is tool calls completed, reason tool_calls, and shows
// its calls as its output, on Get and on List.
func TestRunEndingInToolCalls(t *testing.T) {
	e := newEnv(t)
	sp := spec("lookup cats", true)
	sp.Request.Tools = []runner.Tool{{Name: "lookup"}}
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := finish(h)
	if err != nil || len(res.ToolCalls) != 1 {
		t.Fatalf("result %+v, %v", res, err)
	}
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusCompleted, runner.ReasonToolCalls)
	if !reflect.DeepEqual(r.ToolCalls, res.ToolCalls) || r.ToolCalls[0].Name != "lookup" || r.ToolCalls[0].Arguments != "{}" {
		t.Fatalf("run tool_calls %+v, want %+v", r.ToolCalls, res.ToolCalls)
	}
	page, err := e.svc.List(t.Context(), acme, runner.ListQuery{})
	if err != nil || len(page.Data) != 1 || !reflect.DeepEqual(page.Data[0].ToolCalls, res.ToolCalls) {
		t.Fatalf("listed %+v, %v", page.Data, err)
	}
}
