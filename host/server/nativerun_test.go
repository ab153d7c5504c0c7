package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

const nativeBody = `{"input":[{"role":"user","content":"Hello there runedge"}],"instructions":"Be brief."}`

// A native run answers its run object once it ended, and is listed beside a
// compatible run in the one history.
func TestNativeRunCreate(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/runner/v1/runs", nativeBody, "x-service-tenant-id", "t-n")
	b := body(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	id := checkRunHeaders(t, res.Header)
	run := gjson.ParseBytes(b)
	if run.Get("id").Str != id || run.Get("object").Str != "run" || run.Get("status").Str != "completed" ||
		run.Get("endpoint").Str != "runner" || run.Get("model").Str != "service" || run.Get("tenant_id").Str != "t-n" ||
		run.Get("session_id").Str != res.Header.Get("X-Service-Session-Id") ||
		run.Get("thread_id").Str != res.Header.Get("X-Service-Thread-Id") ||
		run.Get("input.0.content").Str != "Hello there runedge" || run.Get("output").Str == "" ||
		!run.Get("ended_at").Exists() || run.Get("usage.total_tokens").Int() == 0 {
		t.Fatalf("run object: %s", b)
	}
	// The reply is what GET /runner/v1/runs/{id} reads.
	got := body(t, h.do("GET", "/runner/v1/runs/"+id, "", "x-service-tenant-id", "t-n"))
	if string(got) != string(b) {
		t.Fatalf("GET differs from the reply:\n got %s\nwant %s", got, b)
	}
	chat := h.do("POST", "/v1/chat/completions", chatBody, "x-service-tenant-id", "t-n")
	chatID := checkRunHeaders(t, chat.Header)
	body(t, chat)
	list := body(t, h.do("GET", "/runner/v1/runs", "", "x-service-tenant-id", "t-n"))
	if gjson.GetBytes(list, "data.#").Int() != 2 || gjson.GetBytes(list, "data.0.id").Str != chatID ||
		gjson.GetBytes(list, "data.0.endpoint").Str != "chat.completions" ||
		gjson.GetBytes(list, "data.1.id").Str != id || gjson.GetBytes(list, "data.1.endpoint").Str != "runner" {
		t.Fatalf("list: %s", list)
	}
}

// stream:true streams the run's events with ids: run.created, the deltas,
// run.completed with the run as recorded.
func TestNativeRunStream(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/runner/v1/runs", `{"stream":true,"input":[{"role":"user","content":"Tell me a story about runedge"}]}`)
	id := checkRunHeaders(t, res.Header)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), body(t, res))
	}
	evs := readEvents(t, res.Body)
	res.Body.Close()
	if len(evs) < 3 || evs[0].Event != "run.created" || evs[len(evs)-1].Event != "run.completed" {
		t.Fatalf("events: %+v", evs)
	}
	var text strings.Builder
	for i, ev := range evs {
		if ev.ID != strconv.Itoa(i) {
			t.Fatalf("event %d has id %q", i, ev.ID)
		}
		if i > 0 && i < len(evs)-1 {
			if ev.Event != "run.output_text.delta" {
				t.Fatalf("event %d: %+v", i, ev)
			}
			text.WriteString(gjson.Get(ev.Data, "delta").Str)
		}
	}
	created, done := gjson.Parse(evs[0].Data), gjson.Parse(evs[len(evs)-1].Data)
	if created.Get("id").Str != id || created.Get("status").Str != "running" || created.Get("endpoint").Str != "runner" {
		t.Fatalf("run.created: %s", evs[0].Data)
	}
	if done.Get("id").Str != id || done.Get("status").Str != "completed" || done.Get("output").Str != text.String() || text.Len() == 0 {
		t.Fatalf("run.completed %s; deltas %q", evs[len(evs)-1].Data, text.String())
	}
	r := h.run(id)
	if r.Status != runner.StatusCompleted || r.Endpoint != "runner" {
		t.Fatalf("recorded %+v", r)
	}
}

// Tools: a run that ends in calls is completed/tool_calls and lists them;
// the next run carries the results and continues the thread.
func TestNativeRunTools(t *testing.T) {
	h := start(t, nil)
	tools := `"tools":[{"name":"get_weather","description":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	res := h.do("POST", "/runner/v1/runs", `{"input":[{"role":"user","content":"get_weather Paris"}],`+tools+`}`)
	b := body(t, res)
	run := gjson.ParseBytes(b)
	if res.StatusCode != 200 || run.Get("status_reason").Str != "tool_calls" || run.Get("tool_calls.0.name").Str != "get_weather" {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	call := run.Get("tool_calls.0")
	next := `{"thread_id":"` + run.Get("thread_id").Str + `","input":[{"role":"user","content":"get_weather Paris"},` +
		`{"role":"assistant","tool_calls":[` + call.Raw + `]},{"role":"tool","tool_call_id":"` + call.Get("id").Str + `","content":"sunny"}],` + tools + `}`
	res = h.do("POST", "/runner/v1/runs", next)
	b = body(t, res)
	run2 := gjson.ParseBytes(b)
	if res.StatusCode != 200 || run2.Get("status_reason").Str == "tool_calls" || !strings.Contains(run2.Get("output").Str, "sunny") ||
		run2.Get("thread_id").Str != run.Get("thread_id").Str {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
}

// session_id and thread_id continue a session or thread of the caller's
// tenant, as the headers do; another tenant's are not found.
func TestNativeRunContinues(t *testing.T) {
	h := start(t, nil)
	first := gjson.ParseBytes(body(t, h.do("POST", "/v1/responses", `{"model":"service","input":"hi"}`, "x-service-tenant-id", "t-a")))
	sess := first.Get("metadata.service.session_id").Str
	firstRun := h.run(runOf(first.Get("id").Str))
	res := h.do("POST", "/runner/v1/runs", `{"session_id":"`+sess+`","input":[{"role":"user","content":"again"}]}`, "x-service-tenant-id", "t-a")
	b := body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "session_id").Str != sess || gjson.GetBytes(b, "thread_id").Str == firstRun.ThreadID {
		t.Fatalf("session: %d %s", res.StatusCode, b)
	}
	res = h.do("POST", "/runner/v1/runs", `{"thread_id":"`+firstRun.ThreadID+`","input":[{"role":"user","content":"on"}]}`, "x-service-tenant-id", "t-a")
	b = body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "session_id").Str != sess || gjson.GetBytes(b, "thread_id").Str != firstRun.ThreadID {
		t.Fatalf("thread: %d %s", res.StatusCode, b)
	}
	list := body(t, h.do("GET", "/runner/v1/runs?session_id="+sess, "", "x-service-tenant-id", "t-a"))
	if gjson.GetBytes(list, "data.#").Int() != 3 {
		t.Fatalf("session's runs: %s", list)
	}
	// Another tenant: not found, as an unknown id; no run is created.
	wantError(t, h.do("POST", "/runner/v1/runs", `{"session_id":"`+sess+`","input":[{"role":"user","content":"steal"}]}`,
		"x-service-tenant-id", "t-b"), 404, "invalid_request_error", "not_found")
	wantError(t, h.do("POST", "/runner/v1/runs", `{"thread_id":"`+firstRun.ThreadID+`","input":[{"role":"user","content":"steal"}]}`,
		"x-service-tenant-id", "t-b"), 404, "invalid_request_error", "not_found")
	if n := gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs", "", "x-service-tenant-id", "t-b")), "data.#").Int(); n != 0 {
		t.Fatalf("t-b has %d runs", n)
	}
	// A header naming another session contradicts the body.
	e := wantError(t, h.do("POST", "/runner/v1/runs", `{"session_id":"`+sess+`","input":[{"role":"user","content":"x"}]}`,
		"x-service-tenant-id", "t-a", "x-service-session-id", "sess_other"), 400, "invalid_request_error", "invalid_body")
	if p := gjson.GetBytes(e, "error.param").Str; p != "session_id" {
		t.Fatalf("param %q", p)
	}
}

// The auth stage guards the endpoint: token, tenant binding, actor headers.
func TestNativeRunTenancy(t *testing.T) {
	h := start(t, nil)
	wantError(t, h.do("POST", "/runner/v1/runs", nativeBody, "Authorization", "-"), 401, "authentication_error", "invalid_api_key")
	wantError(t, h.do("POST", "/runner/v1/runs", nativeBody, "Authorization", "Bearer "+tokAcme, "x-service-tenant-id", "other"),
		403, "permission_error", "tenant_forbidden")
	res := h.do("POST", "/runner/v1/runs", nativeBody, "Authorization", "Bearer "+tokAcme,
		"x-service-actor-id", "u-7", "x-service-actor-name", "Ada", "x-service-request-id", "req-1")
	b := body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "tenant_id").Str != "acme" || gjson.GetBytes(b, "actor.id").Str != "u-7" ||
		gjson.GetBytes(b, "actor.name").Str != "Ada" || gjson.GetBytes(b, "request_id").Str != "req-1" {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	id := gjson.GetBytes(b, "id").Str
	wantError(t, h.do("GET", "/runner/v1/runs/"+id, "", "x-service-tenant-id", "t-b"), 404, "invalid_request_error", "not_found")
	if r := h.run(id); r.TenantID != "acme" {
		t.Fatalf("admin reads %+v", r)
	}
	wantError(t, h.do("POST", "/runner/v1/runs", nativeBody, "x-service-actor-id", strings.Repeat("a", 300)), 400, "invalid_request_error", "invalid_header")
}

// Bad bodies are 400 invalid_body naming the field, and create no run.
func TestNativeRunBadBodies(t *testing.T) {
	h := start(t, nil)
	msg := `[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		body, param, code string
	}{
		{``, "", "invalid_body"},
		{`{"input":`, "", "invalid_body"},
		{`[]`, "", "invalid_body"},
		{`{}`, "input", "invalid_body"},
		{`{"input":[]}`, "input", "invalid_body"},
		{`{"input":"hi"}`, "input", "invalid_body"},
		{`{"input":[{"role":"bot","content":"hi"}]}`, "input[0].role", "invalid_body"},
		{`{"input":[{"role":"user"}]}`, "input[0].content", "invalid_body"},
		{`{"input":[{"role":"user","content":"a"},{"role":"user","content":7}]}`, "input[1].content", "invalid_body"},
		{`{"input":[{"role":"user","content":"a","name":"x"}]}`, "input[0].name", "invalid_body"},
		{`{"input":[{"role":"tool","content":"a"}]}`, "input[0].tool_call_id", "invalid_body"},
		{`{"input":[{"role":"user","content":"a"},{"role":"tool","content":"a","tool_call_id":"call_x"}]}`, "input", "invalid_body"},
		{`{"input":[{"role":"assistant","tool_calls":[{"name":"f"}]}]}`, "input[0].tool_calls[0].id", "invalid_body"},
		{`{"input":` + msg + `,"sesion_id":"sess_1"}`, "sesion_id", "invalid_body"},
		{`{"input":` + msg + `,"input":` + msg + `}`, "input", "invalid_body"},
		{`{"input":` + msg + `,"stream":"yes"}`, "stream", "invalid_body"},
		{`{"input":` + msg + `,"instructions":1}`, "instructions", "invalid_body"},
		{`{"input":` + msg + `,"max_output_tokens":0}`, "max_output_tokens", "invalid_body"},
		{`{"input":` + msg + `,"max_output_tokens":1.5}`, "max_output_tokens", "invalid_body"},
		{`{"input":` + msg + `,"output_schema":"object"}`, "output_schema", "invalid_body"},
		{`{"input":` + msg + `,"output_schema":{"type":"nonsense"}}`, "output_schema", "invalid_body"},
		{`{"input":` + msg + `,"tools":{}}`, "tools", "invalid_body"},
		{`{"input":` + msg + `,"tools":[{"description":"d"}]}`, "tools[0].name", "invalid_body"},
		{`{"input":` + msg + `,"tools":[{"name":"f","parameters":[]}]}`, "tools[0].parameters", "invalid_body"},
		{`{"input":` + msg + `,"tools":[{"name":"f","parameters":{"type":"nonsense"}}]}`, "tools[0].parameters", "invalid_body"},
		{`{"input":` + msg + `,"tool_choice":"sometimes"}`, "tool_choice", "invalid_body"},
		{`{"input":` + msg + `,"parallel_tool_calls":1}`, "parallel_tool_calls", "invalid_body"},
		{`{"input":` + msg + `,"session_id":"sess 1"}`, "session_id", "invalid_body"},
		{`{"input":` + msg + `,"thread_id":5}`, "thread_id", "invalid_body"},
		{`{"input":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "", "invalid_body"},
	} {
		e := wantError(t, h.do("POST", "/runner/v1/runs", c.body), 400, "invalid_request_error", c.code)
		if p := gjson.GetBytes(e, "error.param"); p.Str != c.param || (c.param == "" && p.Type != gjson.Null) {
			t.Errorf("%s: param %s, want %q (%s)", c.body, p.Raw, c.param, e)
		}
	}
	if n := gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs", "")), "data.#").Int(); n != 0 {
		t.Fatalf("refused requests created %d runs", n)
	}
	// The route still refuses other methods.
	res := h.do("DELETE", "/runner/v1/runs", "")
	wantError(t, res, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed")
	if a := res.Header.Get("Allow"); a != "GET, POST" {
		t.Fatalf("Allow %q", a)
	}
}

// A client that goes away cancels its native run.
func TestNativeRunClientDisconnect(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(30 * time.Millisecond) })
	long := `{"stream":true,"input":[{"role":"user","content":"` + strings.Repeat("word ", 300) + `"}]}`
	res, _, cancel := streamUntilFirstEvent(t, h, "/runner/v1/runs", long)
	id := checkRunHeaders(t, res.Header)
	cancel()
	res.Body.Close()
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("recorded %s/%s", r.Status, r.StatusReason)
	}
	// Whole (not streamed): the same, while the client waits for the reply.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.URL+"/runner/v1/runs", strings.NewReader(strings.Replace(long, `"stream":true`, `"stream":false`, 1)))
	req.Header.Set("Authorization", "Bearer "+tokApp)
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	var whole string
	for deadline := time.Now().Add(10 * time.Second); whole == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the whole run never started")
		}
		whole = gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs?status=running", "")), "data.0.id").Str
	}
	stop()
	<-done
	r = h.waitRun(whole, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("whole: recorded %s/%s", r.Status, r.StatusReason)
	}
}

// Per-token limits hold for native runs: the token's rate (auth) and its
// runs in flight (run stage), both 429 with Retry-After and no run.
func TestNativeRunTokenLimits(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.RatePerSecond, c.Limits.Burst = 0.001, 1
	})
	body(t, h.do("POST", "/runner/v1/runs", nativeBody, "x-service-tenant-id", "t1"))
	res := h.do("POST", "/runner/v1/runs", nativeBody, "x-service-tenant-id", "t2")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	wantError(t, res, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")

	h = start(t, func(c *config.Config) {
		c.Limits.MaxInFlightPerToken = 1
		c.Provider.Offline.TokenDelay = config.Dur(30 * time.Millisecond)
	})
	long := `{"stream":true,"input":[{"role":"user","content":"` + strings.Repeat("word ", 100) + `"}]}`
	first, _, cancel := streamUntilFirstEvent(t, h, "/runner/v1/runs", long)
	defer cancel()
	defer first.Body.Close()
	wantError(t, h.do("POST", "/runner/v1/runs", nativeBody, "x-service-tenant-id", "t3"),
		http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
	if n := gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs?limit=100", "", "Authorization", "Bearer "+tokAdmin)), "data.#").Int(); n != 1 {
		t.Fatalf("%d runs, want the one in flight", n)
	}
}

// A run cancelled through the native API while its creator streams it ends
// that stream with an error event (the OpenAI error body, no id).
func TestNativeRunStreamCancelled(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(30 * time.Millisecond) })
	long := `{"stream":true,"input":[{"role":"user","content":"` + strings.Repeat("word ", 100) + `"}]}`
	res, br, cancel := streamUntilFirstEvent(t, h, "/runner/v1/runs", long)
	defer cancel()
	defer res.Body.Close()
	id := checkRunHeaders(t, res.Header)
	if c := h.do("POST", "/runner/v1/runs/"+id+"/cancel", ""); c.StatusCode != 200 {
		t.Fatalf("cancel: %d %s", c.StatusCode, body(t, c))
	} else {
		body(t, c)
	}
	evs := readEvents(t, br)
	last := evs[len(evs)-1]
	if last.Event != "error" || last.ID != "" || gjson.Get(last.Data, "error.code").Str != "run_cancelled" {
		t.Fatalf("last event %+v", last)
	}
	if r := h.run(id); r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonCancelRequested {
		t.Fatalf("recorded %s/%s", r.Status, r.StatusReason)
	}
}

// A silent native stream sends ": keepalive" comments between deltas.
func TestNativeRunKeepalive(t *testing.T) {
	h := slowStreams(t, 100*time.Millisecond)
	lines := rawLines(t, h, "/runner/v1/runs", `{"stream":true,"input":[{"role":"user","content":"one two three"}]}`)
	between := keepalivesBetween(lines, "event: run.output_text.delta")
	if between < 2 {
		t.Fatalf("%d keepalives between deltas, want at least 2:\n%s", between, strings.Join(lines, "\n"))
	}
}
