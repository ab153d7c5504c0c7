package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// wantError checks an error reply: status, the OpenAI body with all four
// keys, JSON content type. It returns the body.
func wantError(t *testing.T, res *http.Response, status int, typ, code string) []byte {
	t.Helper()
	b := body(t, res)
	if res.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", res.StatusCode, status, b)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q: %s", ct, b)
	}
	e := gjson.GetBytes(b, "error")
	for _, k := range []string{"message", "type", "param", "code"} {
		if !e.Get(k).Exists() {
			t.Fatalf("error body lacks %q: %s", k, b)
		}
	}
	if e.Get("type").Str != typ || e.Get("code").Str != code || e.Get("message").Str == "" {
		t.Fatalf("want %s/%s, got %s", typ, code, b)
	}
	return b
}

// runCount counts the runs in the history (admin view).
func (h *harness) runCount() int {
	h.t.Helper()
	b := body(h.t, h.do("GET", "/runner/v1/runs?limit=100", "", "Authorization", "Bearer "+tokAdmin))
	return len(gjson.GetBytes(b, "data").Array())
}

// Refusals before the run stage: right status and body, no run created, no
// run headers.
func TestRefusalsCreateNoRun(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.MaxBodyBytes = 4096 })
	chat := "/v1/chat/completions"
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		typ, code, param         string
	}{
		{"invalid json", "POST", chat, `{"model":`, nil, 400, "invalid_request_error", "invalid_body", ""},
		{"bad shape", "POST", chat, `{"model":"service","messages":[{"role":"wizard","content":"x"}]}`, nil, 400, "invalid_request_error", "invalid_body", "messages[0].role"},
		{"bad responses input item", "POST", "/v1/responses", `{"model":"service","input":[{"type":"function_call"}]}`, nil, 400, "invalid_request_error", "invalid_body", "input[0].call_id"},
		{"forced hosted tool", "POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"}}`, nil, 400, "invalid_request_error", "unsupported_parameter", "tool_choice"},
		{"custom chat tool", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"f"}}]}`, nil, 400, "invalid_request_error", "unsupported_parameter", "tools[0].type"},
		{"tool schema", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"nonsense"}}}]}`, nil, 400, "invalid_request_error", "invalid_body", "tools[0].function.parameters"},
		{"tool schema responses", "POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"function","name":"f"},{"type":"function","name":"g","parameters":{"type":"object","properties":{"a":{"minimum":"x"}}}}]}`, nil, 400, "invalid_request_error", "invalid_body", "tools[1].parameters"},
		{"tool_choice not offered", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, nil, 400, "invalid_request_error", "invalid_body", "tool_choice.function.name"},
		{"bad schema", "POST", "/v1/responses", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object","properties":{"a":{"type":"nonsense"}}}}}}`, nil, 400, "invalid_request_error", "invalid_body", "text.format.schema"},
		{"other model", "POST", chat, `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`, nil, 404, "invalid_request_error", "model_not_found", "model"},
		{"no token", "POST", chat, chatBody, []string{"Authorization", "-"}, 401, "authentication_error", "invalid_api_key", ""},
		{"wrong token", "POST", chat, chatBody, []string{"Authorization", "Bearer nope"}, 401, "authentication_error", "invalid_api_key", ""},
		{"other tenant", "POST", chat, chatBody, []string{"Authorization", "Bearer " + tokAcme, "x-service-tenant-id", "globex"}, 403, "permission_error", "tenant_forbidden", "X-Service-Tenant-Id"},
		{"tool result answering no call", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_1","content":"42"}]}`, nil, 400, "invalid_request_error", "invalid_body", "messages[1].tool_call_id"},
		{"function_call_output answering no call", "POST", "/v1/responses", `{"model":"service","input":[{"role":"user","content":"x"},{"type":"function_call_output","call_id":"call_9","output":"42"}]}`, nil, 400, "invalid_request_error", "invalid_body", "input"},
		{"compressed body", "POST", chat, chatBody, []string{"Content-Encoding", "gzip"}, 415, "invalid_request_error", "unsupported_content_encoding", ""},
		{"chat stop sequence", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"x"}],"stop":["\n"]}`, nil, 400, "invalid_request_error", "unsupported_parameter", "stop"},
		{"too large", "POST", chat, `{"model":"service","messages":[{"role":"user","content":"` + strings.Repeat("a", 5000) + `"}]}`, nil, 413, "invalid_request_error", "body_too_large", ""},
		{"unknown path", "GET", "/v1/embeddings", "", nil, 404, "invalid_request_error", "not_found", ""},
		{"wrong method", "GET", chat, "", nil, 405, "invalid_request_error", "method_not_allowed", ""},
		{"bad header", "POST", chat, chatBody, []string{"x-service-actor-id", strings.Repeat("x", 300)}, 400, "invalid_request_error", "invalid_header", "X-Service-Actor-Id"},
		{"unknown session", "POST", chat, chatBody, []string{"x-service-session-id", "sess_nope"}, 404, "invalid_request_error", "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.runCount()
			res := h.do(tc.method, tc.path, tc.body, tc.headers...)
			b := wantError(t, res, tc.status, tc.typ, tc.code)
			if p := gjson.GetBytes(b, "error.param"); tc.param != "" && p.Str != tc.param {
				t.Fatalf("param %v, want %s", p, tc.param)
			}
			if res.Header.Get("X-Service-Run-Id") != "" {
				t.Fatal("a refused request carries a run id")
			}
			if tc.status == 405 && res.Header.Get("Allow") != "POST" {
				t.Fatalf("Allow %q", res.Header.Get("Allow"))
			}
			if after := h.runCount(); after != before {
				t.Fatalf("a refused request created a run (%d → %d)", before, after)
			}
		})
	}
}

func TestRateLimited(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.RatePerSecond, c.Limits.Burst = 0.01, 1 })
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("first request: %d %s", res.StatusCode, body(t, res))
	}
	res := h.do("POST", "/v1/chat/completions", chatBody)
	wantError(t, res, 429, "rate_limit_error", "rate_limit_exceeded")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

// Outcomes of runs that started: the error, the run headers, and the run
// recorded with its reason.
func TestRunOutcomes(t *testing.T) {
	h := start(t, nil)
	schema := `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`
	for _, tc := range []struct {
		name, path, body string
		status           int
		typ, code        string
		runStatus        runner.Status
		reason           string
	}{
		{"provider failure", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"/fail now"}]}`,
			502, "api_error", "provider_error", runner.StatusFailed, runner.ReasonProviderError},
		{"waiting", "/v1/responses", `{"model":"service","input":"/wait for approval"}`,
			409, "api_error", "run_waiting", runner.StatusWaiting, runner.ReasonApproval},
		{"output not matching the schema", "/v1/responses", `{"model":"service","input":"/invalid",
			"text":{"format":{"type":"json_schema","name":"n","schema":` + schema + `}}}`,
			500, "server_error", "run_failed", runner.StatusFailed, runner.ReasonOutputInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do("POST", tc.path, tc.body)
			wantError(t, res, tc.status, tc.typ, tc.code)
			id := checkRunHeaders(t, res.Header)
			r := h.run(id)
			if r.Status != tc.runStatus || r.StatusReason != tc.reason {
				t.Fatalf("run recorded %s/%s, want %s/%s", r.Status, r.StatusReason, tc.runStatus, tc.reason)
			}
			if tc.runStatus == runner.StatusFailed && (r.Error == nil || r.Error.Message == "") {
				t.Fatalf("failed run without error: %+v", r)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.RunTimeout = config.Dur(150 * time.Millisecond)
		c.Provider.Offline.TokenDelay = config.Dur(100 * time.Millisecond)
	})
	res := h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"a b c d e f g h"}]}`)
	wantError(t, res, 504, "api_error", "timeout")
	r := h.run(checkRunHeaders(t, res.Header))
	if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonTimeout {
		t.Fatalf("run %+v", r)
	}
}

// A run cancelled through the native API answers its own request with 409.
func TestCancelledByNativeAPI(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(50 * time.Millisecond) })
	got := make(chan *http.Response, 1)
	go func() {
		got <- h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("word ", 200)+`"}`,
			"x-service-tenant-id", "t-cancel")
	}()
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		b := body(t, h.do("GET", "/runner/v1/runs?status=running", "", "x-service-tenant-id", "t-cancel"))
		id = gjson.GetBytes(b, "data.0.id").Str
		time.Sleep(10 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the run never showed as running")
	}
	// Another tenant cannot see or cancel it.
	wantError(t, h.do("POST", "/runner/v1/runs/"+id+"/cancel", "", "x-service-tenant-id", "t-other"),
		404, "invalid_request_error", "not_found")
	res := h.do("POST", "/runner/v1/runs/"+id+"/cancel", "", "x-service-tenant-id", "t-cancel")
	b := body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "status").Str != "cancelled" ||
		gjson.GetBytes(b, "status_reason").Str != runner.ReasonCancelRequested {
		t.Fatalf("cancel: %d %s", res.StatusCode, b)
	}
	wantError(t, <-got, 409, "api_error", "run_cancelled")
}

func TestOverloaded(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.MaxInFlight = 1
		c.Provider.Offline.TokenDelay = config.Dur(100 * time.Millisecond)
	})
	first := make(chan *http.Response, 1)
	go func() {
		first <- h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"a b c d e f"}]}`)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for h.srv.Runs().InFlight() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	res := h.do("POST", "/v1/chat/completions", chatBody)
	wantError(t, res, 503, "api_error", "unavailable")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	if r := <-first; r.StatusCode != 200 {
		t.Fatalf("the run in flight failed: %d", r.StatusCode)
	}
}

// An error after the stream started arrives as an SSE error event.
func TestErrorMidStream(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct{ path, body, event string }{
		{"/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"/fail-mid please"}]}`, ""},
		{"/v1/responses", `{"model":"service","stream":true,"input":"/fail-mid please"}`, "error"},
	} {
		res := h.do("POST", tc.path, tc.body)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", tc.path, res.StatusCode)
		}
		id := checkRunHeaders(t, res.Header)
		evs := readEvents(t, res.Body)
		res.Body.Close()
		last := evs[len(evs)-1]
		if last.Event != tc.event {
			t.Fatalf("%s: last event %q", tc.path, last.Event)
		}
		code := gjson.Get(last.Data, "error.code").Str
		if tc.event == "error" {
			code = gjson.Get(last.Data, "code").Str
		}
		if code != "provider_error" {
			t.Fatalf("%s: last event %s", tc.path, last.Data)
		}
		if r := h.run(id); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonProviderError {
			t.Fatalf("run %+v", r)
		}
	}
}
