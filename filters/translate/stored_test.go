package translate_test

import (
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// A stored response without its final object is rebuilt by the result
// mapping plugin with the Response status of the run's state (and, for a
// run that failed, its error); a recorded final object is returned as is,
// with no plugin call.
func TestStoredResponse(t *testing.T) {
	p := &filtertest.Mapper{Hooks: map[runtime.Hook]filtertest.Hook{runtime.MapResult: prettyResult}}
	base := runner.Run{ID: "run_abc", SessionID: "s", CreatedAt: 1}
	for _, c := range []struct {
		name       string
		rec        runner.ResponseRecord
		run        func(r runner.Run) runner.Run
		status     string
		text, code string
	}{
		{name: "queued", run: func(r runner.Run) runner.Run { r.Status = runner.StatusQueued; return r }, status: "queued"},
		{name: "running", run: func(r runner.Run) runner.Run { r.Status = runner.StatusRunning; return r }, status: "in_progress"},
		{name: "completed", run: func(r runner.Run) runner.Run {
			r.Status, r.Output = runner.StatusCompleted, "the answer"
			return r
		}, status: "completed", text: "the answer"},
		{name: "cancelled", run: func(r runner.Run) runner.Run { r.Status = runner.StatusCancelled; return r }, status: "cancelled"},
		{name: "failed", run: func(r runner.Run) runner.Run {
			r.Status, r.Error = runner.StatusFailed, &runner.ErrorInfo{Code: "provider_error", Message: "upstream failed"}
			return r
		}, status: "failed", code: "provider_error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj, err := translate.StoredResponse(context.Background(), p, c.rec, c.run(base))
			if err != nil {
				t.Fatal(err)
			}
			r := gjson.ParseBytes(obj)
			if r.Get("id").Str != "resp_abc" || r.Get("status").Str != c.status {
				t.Errorf("id %q status %q, want resp_abc %q: %s", r.Get("id").Str, r.Get("status").Str, c.status, obj)
			}
			if got := r.Get("output.0.content.0.text").Str; got != c.text {
				t.Errorf("text %q, want %q", got, c.text)
			}
			if got := r.Get("error.code").Str; got != c.code {
				t.Errorf("error.code %q, want %q", got, c.code)
			}
		})
	}
	before := len(p.Calls(runtime.MapResult))
	final := []byte(`{"id":"resp_abc","status":"completed"}`)
	obj, err := translate.StoredResponse(context.Background(), p, runner.ResponseRecord{Object: final}, base)
	if err != nil || string(obj) != string(final) {
		t.Errorf("recorded object: got %s, %v; want it as is", obj, err)
	}
	if n := len(p.Calls(runtime.MapResult)) - before; n != 0 {
		t.Errorf("a recorded object cost %d plugin calls", n)
	}
}
