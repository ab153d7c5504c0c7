package translate_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/run"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// env is the run and translate stages over a real run service (SQLite, a
// scripted agent) and a fake result mapping plugin: the end of the POST
// chains, without a server.
type env struct {
	runs   *filtertest.Runs
	plugin *filtertest.Mapper
	chain  filters.Handler
}

type envConfig struct {
	window, keepalive time.Duration
	// mapStream, when set, is the plugin's map_stream hook.
	mapStream filtertest.Hook
}

func newEnv(t *testing.T, agent runner.Agent, c envConfig) *env {
	t.Helper()
	runs := filtertest.NewRuns(t, agent)
	p := &filtertest.Mapper{PluginName: "fake-result", Hooks: map[runtime.Hook]filtertest.Hook{runtime.MapResult: prettyResult}}
	if c.mapStream != nil {
		p.Hooks[runtime.MapStream] = c.mapStream
	}
	tr, err := translate.New(p, c.window, translate.Keepalive(c.keepalive))
	if err != nil {
		t.Fatal(err)
	}
	return &env{runs: runs, plugin: p, chain: filters.Chain(nil, run.New(runs.Service), tr)}
}

// request says what the exchange asks for.
type request struct {
	ep                               filters.Endpoint
	stream, includeUsage, background bool
}

// do runs one request through the chain and returns its exchange, its
// recorder and the chain's error (already rendered, as the edge would).
func (e *env) do(t *testing.T, ctx context.Context, r request) (*filters.Exchange, *httptest.ResponseRecorder, error) {
	t.Helper()
	x, rec := filtertest.Exchange(r.ep, `{}`)
	x.Identity.TenantID = "acme"
	x.Stream, x.IncludeUsage = r.stream, r.includeUsage
	x.Native = runner.Request{Input: []runner.Message{{Role: "user", Content: "hi"}},
		Stream: r.stream, Background: r.background}
	err := filtertest.Serve(ctx, e.chain, x)
	return x, rec, err
}

// prettyResult is a map_result hook that answers with an indented object,
// as ABI.md allows a plugin to: the host must compact it before framing it
// in an SSE data line, which ends at the first newline. The object carries
// the envelope's id, status and text, and for chat a choice.
func prettyResult(in []byte) ([]byte, error) {
	env := gjson.ParseBytes(in)
	var obj map[string]any
	if env.Get("endpoint").Str == string(filters.ChatCompletions) {
		obj = map[string]any{"id": env.Get("id").Str, "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": env.Get("result.finish_reason").Str,
				"message": map[string]any{"role": "assistant", "content": env.Get("result.text").Str}}}}
	} else {
		obj = map[string]any{"id": env.Get("id").Str, "object": "response", "status": env.Get("status").Str,
			"output": []any{map[string]any{"type": "message", "id": env.Get("message_id").Str,
				"content": []any{map[string]any{"type": "output_text", "text": env.Get("result.text").Str}}}}}
	}
	return json.MarshalIndent(obj, "", "  ")
}

// runID is the run the reply names in its headers.
func runID(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	id := rec.Header().Get(filters.HeaderRunID)
	if !strings.HasPrefix(id, "run_") {
		t.Fatalf("reply has no run id header: %q", id)
	}
	return id
}

// names are the events' names, comments as ": text".
func names(evs []filtertest.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Name
		if ev.Comment != "" {
			out[i] = ": " + ev.Comment
		}
	}
	return out
}

// wantEnded waits for the run to be recorded and checks its state.
func (e *env) wantEnded(t *testing.T, id string, status runner.Status, reason string) {
	t.Helper()
	r := e.runs.WaitEnded(t, 5*time.Second)
	if r.ID != id || r.Status != status || r.StatusReason != reason {
		t.Fatalf("run %s ended %s/%s, want run %s %s/%s", r.ID, r.Status, r.StatusReason, id, status, reason)
	}
	if got := e.runs.Get(t, id); got.Status != status {
		t.Fatalf("store has run %s %s, want %s", id, got.Status, status)
	}
}
