package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// threeCallsOf answers a whole chat.completion that calls f three times.
func threeCallsOf(w http.ResponseWriter, _ *http.Request) {
	var calls []string
	for i := range 3 {
		calls = append(calls, fmt.Sprintf(`{"id":"call_%d","type":"function","function":{"name":"f","arguments":"{}"}}`, i))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
		strings.Join(calls, ","))
}

// The Responses settings meant for the model reach a real upstream over a
// socket under their chat completions names (reasoning.effort as
// reasoning_effort), and the Response echoes them; max_tool_calls keeps the
// first calls of an upstream that makes more.
func TestResponsesFieldsReachTheUpstream(t *testing.T) {
	up := newScripted(t, byMessage(map[string]http.HandlerFunc{"settings": wholeOf("ok"), "calls": threeCallsOf}))
	h := start(t, viaOpenAI(up.srv.URL, nil))
	resp := openResponses(t, "ResponseResource")

	res := h.do("POST", "/v1/responses", `{"model":"service","input":"settings","reasoning":{"effort":"high","summary":"auto"},
		"prompt_cache_key":"pk-1","safety_identifier":"sid-1","service_tier":"flex","user":"u-1"}`)
	out := string(body(t, res))
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, out)
	}
	if err := resp.Validate([]byte(out)); err != nil {
		t.Fatalf("reply: %v\n%s", err, out)
	}
	sent := up.requestsFor("settings")
	if len(sent) != 1 {
		t.Fatalf("upstream got %d requests", len(sent))
	}
	for field, want := range map[string]string{"reasoning_effort": "high", "prompt_cache_key": "pk-1",
		"safety_identifier": "sid-1", "service_tier": "flex", "user": "u-1"} {
		if got := gjson.Get(sent[0], field).Str; got != want {
			t.Errorf("upstream %s = %q, want %q: %s", field, got, want, sent[0])
		}
	}
	for path, want := range map[string]string{"reasoning.effort": "high", "reasoning.summary": "auto",
		"prompt_cache_key": "pk-1", "safety_identifier": "sid-1", "service_tier": "flex", "user": "u-1"} {
		if got := gjson.Get(out, path).Str; got != want {
			t.Errorf("echo %s = %q, want %q", path, got, want)
		}
	}

	res = h.do("POST", "/v1/responses", `{"model":"service","input":"calls","max_tool_calls":2,
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`)
	out = string(body(t, res))
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, out)
	}
	if n := len(gjson.Get(out, "output").Array()); n != 2 || gjson.Get(out, "max_tool_calls").Int() != 2 {
		t.Errorf("max_tool_calls 2: %d output items: %s", n, out)
	}
	if err := resp.Validate([]byte(out)); err != nil {
		t.Fatalf("reply: %v\n%s", err, out)
	}
}
