package translate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// The plugin answers indented JSON (prettyResult): the reply carries it
// compacted, as a JSON body and inside the SSE data lines of a stream,
// where a newline would end the line (filtertest.SSE fails on such a
// frame).
func TestPrettyPluginOutputIsCompacted(t *testing.T) {
	t.Parallel()
	agent := &filtertest.Agent{Events: filtertest.Deltas("a"), Result: runner.Result{Text: "a\nb", FinishReason: "stop"}}
	e := newEnv(t, agent, envConfig{})
	for _, r := range []request{{ep: filters.ChatCompletions}, {ep: filters.Responses}, {ep: filters.Responses, stream: true}} {
		_, rec, err := e.do(t, t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		calls := e.plugin.Calls(runtime.MapResult)
		pretty, _ := prettyResult([]byte(calls[len(calls)-1]))
		var want bytes.Buffer
		if err := json.Compact(&want, pretty); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(pretty, []byte("\n  ")) {
			t.Fatalf("the fake plugin's output is not indented: %s", pretty)
		}
		got := rec.Body.String()
		if r.stream {
			evs := filtertest.SSE(t, got)
			got = gjson.Get(evs[len(evs)-1].Data, "response").Raw
		}
		if got != want.String() {
			t.Errorf("%+v: reply\n%s\nwant the plugin's object compacted\n%s", r, got, want.String())
		}
	}
}

// Output the codec refuses is a 500 plugin_error naming the plugin, never
// passed on; the run is recorded failed with reason plugin_error.
func TestPluginGarbageIsPluginError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &filtertest.Agent{Result: runner.Result{Text: "hi", FinishReason: "stop"}}, envConfig{})
	for _, out := range []string{"not json", `["an array"]`, "{\"open\":"} {
		e.plugin.Hooks[runtime.MapResult] = func([]byte) ([]byte, error) { return []byte(out), nil }
		_, rec, err := e.do(t, t.Context(), request{ep: filters.ChatCompletions})
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != 500 || ae.Code != apierr.CodePluginError || !strings.Contains(ae.Message, "fake-result") {
			t.Fatalf("%q: err %v, want 500 plugin_error naming the plugin", out, err)
		}
		if rec.Code != 500 || strings.Contains(rec.Body.String(), out) {
			t.Errorf("%q: reply %d %s", out, rec.Code, rec.Body)
		}
		e.wantEnded(t, runID(t, rec), runner.StatusFailed, runner.ReasonPluginError)
	}
}
