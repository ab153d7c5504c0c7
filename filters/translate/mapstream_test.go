package translate_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// upperWords is a map_stream hook that emits its text up to the last space,
// upper-cased, and holds back the rest (a word the next text may finish);
// the final call emits everything. Its output is indented, as ABI.md
// allows.
func upperWords(in []byte) ([]byte, error) {
	text, final := gjson.GetBytes(in, "text").Str, gjson.GetBytes(in, "final").Bool()
	cut := strings.LastIndexByte(text, ' ') + 1
	if final {
		cut = len(text)
	}
	return json.MarshalIndent(map[string]string{"emit": strings.ToUpper(text[:cut]), "hold": text[cut:]}, "", "  ")
}

// Deltas that arrive within the stream window reach the plugin as one
// map_stream call, not one call each.
func TestMapStreamBatchesDeltas(t *testing.T) {
	t.Parallel()
	deltas := filtertest.Deltas("one ", "two ", "thr", "ee ", "four ", "five")
	agent := &filtertest.Agent{Events: deltas, Result: runner.Result{Text: "one two three four five", FinishReason: "stop"}}
	// The window is long: the batch ends when the run's events do.
	e := newEnv(t, agent, envConfig{window: 5 * time.Second, mapStream: upperWords})
	_, rec, err := e.do(t, t.Context(), request{ep: filters.ChatCompletions, stream: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := e.plugin.Calls(runtime.MapStream)
	if len(calls) != 1 {
		t.Fatalf("%d map_stream calls for %d deltas, want 1: %q", len(calls), len(deltas), calls)
	}
	if in := gjson.Parse(calls[0]); in.Get("text").Str != "one two three four five" || !in.Get("final").Bool() {
		t.Errorf("map_stream input %s", calls[0])
	}
	if got := chatText(t, rec.Body.String()); got != "ONE TWO THREE FOUR FIVE" {
		t.Errorf("streamed %q", got)
	}
}

// Batches that come apart (no window: each takes what is waiting; the
// agent sends a delta only once the plugin has mapped the one before) are
// mapped one call each; what the plugin holds back opens the next call's
// text, and the final call releases the rest.
func TestMapStreamHoldCarriesOver(t *testing.T) {
	t.Parallel()
	mapped := make(chan struct{}, 16)
	agent := &filtertest.Agent{Events: filtertest.Deltas("hello wor", "ld and", " more"),
		Wait: func(i int) {
			if i > 0 {
				<-mapped
			}
		},
		Result: runner.Result{Text: "hello world and more", FinishReason: "stop"}}
	e := newEnv(t, agent, envConfig{mapStream: func(in []byte) ([]byte, error) {
		mapped <- struct{}{}
		return upperWords(in)
	}})
	_, rec, err := e.do(t, t.Context(), request{ep: filters.Responses, stream: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := e.plugin.Calls(runtime.MapStream)
	if len(calls) < 3 || gjson.Get(calls[0], "text").Str != "hello wor" || gjson.Get(calls[1], "text").Str != "world and" {
		t.Fatalf("map_stream calls %q, want one per delta, the held text first", calls)
	}
	hold := ""
	for i, c := range calls {
		in := gjson.Parse(c)
		if !strings.HasPrefix(in.Get("text").Str, hold) {
			t.Errorf("call %d text %q does not start with the held %q", i, in.Get("text").Str, hold)
		}
		if final := i == len(calls)-1; in.Get("final").Bool() != final {
			t.Errorf("call %d final %v", i, !final)
		}
		out, _ := upperWords([]byte(c))
		hold = gjson.GetBytes(out, "hold").Str
	}
	if last := gjson.Get(calls[len(calls)-1], "text").Str; !strings.HasSuffix(last, "more") {
		t.Errorf("final call text %q, want the last words", last)
	}
	var text strings.Builder
	for _, ev := range filtertest.SSE(t, rec.Body.String()) {
		if ev.Name == "response.output_text.delta" {
			text.WriteString(gjson.Get(ev.Data, "delta").Str)
		}
	}
	if text.String() != "HELLO WORLD AND MORE" {
		t.Errorf("streamed %q", text.String())
	}
}

// chatText joins the content deltas of a chat stream.
func chatText(t *testing.T, body string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range filtertest.SSE(t, body) {
		b.WriteString(gjson.Get(ev.Data, "choices.0.delta.content").Str)
	}
	return b.String()
}
