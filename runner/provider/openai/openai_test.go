package openai_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/openai"
)

func TestStreamForwardsDeltasAsTheyArrive(t *testing.T) {
	// The upstream holds the rest of its answer until the provider has
	// passed the first delta on: a provider that buffered would deadlock
	// here and fail on the idle timeout instead.
	firstSeen := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, roleChunk, chunk("Hel"))
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		send(w, chunk("lo"), finishChunk, usageChunk, doneEvent)
	})
	p := u.provider(func(c *openai.Config) { c.IncludeUsage = true })
	var deltas []string
	res, err := p.Generate(t.Context(), ask("hi", true), func(ev runner.Event) error {
		d := ev.Delta
		if len(deltas) == 0 {
			close(firstSeen)
		}
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deltas, []string{"Hel", "lo"}) {
		t.Fatalf("deltas %q", deltas)
	}
	want := runner.Result{Text: "Hello", FinishReason: "stop", Usage: runner.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	body := u.body(0)
	if body["stream"] != true || body["model"] != "up-model" {
		t.Fatalf("upstream got %v", body)
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatalf("include_usage not requested: %v", body["stream_options"])
	}
	h := u.header(0)
	if h.Get("Authorization") != "Bearer sk-test-secret-key-123456" || h.Get("Accept") != "text/event-stream" {
		t.Fatalf("headers %v", h)
	}
}

func TestRequestBody(t *testing.T) {
	u := newUpstream(t, streams("ok"))
	p := u.provider(func(c *openai.Config) { c.APIKey = "" })
	schema := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	if _, _, err := generate(t, p, runner.ProviderRequest{Messages: ask("x", true).Messages, Stream: true,
		OutputSchema: json.RawMessage(schema), SchemaName: "my schema!", MaxOutputTokens: 9}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := generate(t, p, runner.ProviderRequest{Messages: ask("x", true).Messages, Stream: true, JSONObject: true}); err != nil {
		t.Fatal(err)
	}
	b := u.body(0)
	if _, ok := b["stream_options"]; ok {
		t.Fatal("stream_options sent without include_usage")
	}
	wantMsgs := []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "x"}}
	if !reflect.DeepEqual(b["messages"], wantMsgs) || b["max_tokens"] != float64(9) {
		t.Fatalf("body %v", b)
	}
	rf, _ := b["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	var wantSchema any
	json.Unmarshal([]byte(schema), &wantSchema)
	if rf["type"] != "json_schema" || js["name"] != "my_schema_" || !reflect.DeepEqual(js["schema"], wantSchema) {
		t.Fatalf("response_format %v", rf)
	}
	if rf, _ := u.body(1)["response_format"].(map[string]any); rf["type"] != "json_object" || rf["json_schema"] != nil {
		t.Fatalf("json_object response_format %v", rf)
	}
	if u.header(0).Get("Authorization") != "" {
		t.Fatal("Authorization sent without a key")
	}
}

func TestWholeAnswer(t *testing.T) {
	u := newUpstream(t, answers(`{"a":"b"}`))
	p := u.provider(func(c *openai.Config) { c.IncludeUsage = true })
	deltas, res, err := generate(t, p, ask("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	want := runner.Result{Text: `{"a":"b"}`, FinishReason: "stop", Usage: runner.Usage{InputTokens: 4, OutputTokens: 2, TotalTokens: 6}}
	if !reflect.DeepEqual(res, want) || !slices.Equal(deltas, []string{`{"a":"b"}`}) {
		t.Fatalf("result %+v deltas %q", res, deltas)
	}
	b := u.body(0)
	if b["stream"] != false || b["stream_options"] != nil {
		t.Fatalf("a whole call asked for a stream: %v", b)
	}
	if u.header(0).Get("Accept") != "application/json" {
		t.Fatalf("Accept %q", u.header(0).Get("Accept"))
	}
}

// An upstream that ignores "stream": true and answers whole is read whole.
func TestStreamRequestAnsweredWhole(t *testing.T) {
	u := newUpstream(t, answers("all at once"))
	deltas, res, err := generate(t, u.provider(nil), ask("hi", true))
	if err != nil || res.Text != "all at once" || !slices.Equal(deltas, []string{"all at once"}) {
		t.Fatalf("res %+v deltas %q err %v", res, deltas, err)
	}
}

func TestStreamDetails(t *testing.T) {
	cases := []struct {
		name   string
		events []string
		want   runner.Result
	}{
		{"length and no usage", []string{chunk("a"), `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n", doneEvent},
			runner.Result{Text: "a", FinishReason: "length"}},
		{"comments, CRLF, data without space, other choices", []string{": keep-alive\n\n",
			"data:{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}},{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\r\n\r\n",
			"event: message\nid: 7\n" + chunk("y"), finishChunk, doneEvent},
			runner.Result{Text: "xy", FinishReason: "stop"}},
		{"finish without [DONE]", []string{chunk("z"), finishChunk},
			runner.Result{Text: "z", FinishReason: "stop"}},
		{"last event without its blank line", []string{chunk("w"), "data: [DONE]"},
			runner.Result{Text: "w", FinishReason: "stop"}},
		{"usage without total", []string{chunk("v"), finishChunk, `data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1}}` + "\n\n", doneEvent},
			runner.Result{Text: "v", FinishReason: "stop", Usage: runner.Usage{InputTokens: 2, OutputTokens: 1, TotalTokens: 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				send(w, c.events...)
			})
			_, res, err := generate(t, u.provider(nil), ask("hi", true))
			if err != nil || !reflect.DeepEqual(res, c.want) {
				t.Fatalf("result %+v err %v, want %+v", res, err, c.want)
			}
		})
	}
}

func TestConfigChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  openai.Config
	}{
		{"no url", openai.Config{Model: "m"}},
		{"not http", openai.Config{BaseURL: "ftp://x/v1", Model: "m"}},
		{"no model", openai.Config{BaseURL: "http://x/v1"}},
		{"too many attempts", openai.Config{BaseURL: "http://x/v1", Model: "m", MaxAttempts: 11}},
		{"base above max", openai.Config{BaseURL: "http://x/v1", Model: "m", BackoffBase: 10e9, BackoffMax: 1e9}},
		{"negative", openai.Config{BaseURL: "http://x/v1", Model: "m", IdleTimeout: -1}},
	} {
		if _, err := openai.New(c.cfg); err == nil {
			t.Errorf("%s: New accepted %+v", c.name, c.cfg)
		}
	}
	p, err := openai.New(openai.Config{BaseURL: "http://x/v1/", Model: "m"})
	if err != nil || p.Name() != "openai" {
		t.Fatalf("defaults refused: %v", err)
	}
}
