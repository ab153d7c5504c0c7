package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
)

// hugeExponentSchema is 8,000 keywords whose numbers have exponents far
// outside float64's range, 176 KB: under the schema and body limits.
func hugeExponentSchema() string {
	return `{"allOf":[` + strings.TrimSuffix(strings.Repeat(`{"minimum":1e1000000},`, 8000), ",") + `]}`
}

// TestHugeNumberSchemaRefusedFast: a schema of 8,000 huge-exponent
// keywords is a 400 invalid_schema naming the field, within milliseconds,
// on every way a schema comes in (text.format, response_format, a tool's
// parameters on both endpoints, the native output_schema), and no run is
// created. Before, each number cost the schema library about 30 ms: one
// such request held a core for minutes before its run existed, and neither
// the run timeout nor a disconnect stopped it.
func TestHugeNumberSchemaRefusedFast(t *testing.T) {
	h := start(t, nil)
	sc := hugeExponentSchema()
	msg := `[{"role":"user","content":"x"}]`
	for _, ep := range []struct{ path, body, param string }{
		{"/v1/responses", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":` + sc + `}}}`, "text.format.schema"},
		{"/v1/chat/completions", `{"model":"service","messages":` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + sc + `}}}`, "response_format.json_schema.schema"},
		{"/v1/responses", `{"model":"service","input":"x","tools":[{"type":"function","name":"f","parameters":` + sc + `}]}`, "tools[0].parameters"},
		{"/v1/chat/completions", `{"model":"service","messages":` + msg + `,"tools":[{"type":"function","function":{"name":"f","parameters":` + sc + `}}]}`, "tools[0].function.parameters"},
		{"/runner/v1/runs", `{"input":` + msg + `,"output_schema":` + sc + `}`, "output_schema"},
	} {
		t.Run(ep.param, func(t *testing.T) {
			before := h.runCount()
			begun := time.Now()
			res := h.do("POST", ep.path, ep.body)
			b := wantError(t, res, 400, "invalid_request_error", "invalid_schema")
			if el := time.Since(begun); el > 2*time.Second {
				t.Errorf("answered after %s; the bound is 2s (milliseconds are expected)", el)
			}
			if p := gjson.GetBytes(b, "error.param").Str; p != ep.param {
				t.Errorf("param %q, want %q", p, ep.param)
			}
			if m := gjson.GetBytes(b, "error.message").Str; !strings.Contains(m, "float64's range") {
				t.Errorf("message %q does not say what is wrong", m)
			}
			if after := h.runCount(); after != before {
				t.Errorf("a refused request created a run (%d → %d)", before, after)
			}
		})
	}
}

// TestPanickingSchemaIsA400WithOneAccessLine: the 175-byte schema whose
// `multipleOf: 1e10000000` made the schema library dereference a nil
// big.Rat is a 400 invalid_schema naming the field, and the request leaves
// exactly one access line. Before, the connection was reset, 11 KB of stack
// were logged, and the request was in neither the access log nor the
// metrics.
func TestPanickingSchemaIsA400WithOneAccessLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, hs, logs := loggingServer(t, ctx)
	defer hs.Close()
	h := &harness{t: t, URL: hs.URL}
	sc := `{"type":"object","properties":{"n":{"type":"number","multipleOf":1e10000000}},"required":["n"],"additionalProperties":false}`
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":`+sc+`}}}`)
	b := wantError(t, res, 400, "invalid_request_error", "invalid_schema")
	if p := gjson.GetBytes(b, "error.param").Str; p != "text.format.schema" {
		t.Errorf("param %q, want text.format.schema", p)
	}
	hs.Close()
	srv.close(ctx)
	var access []map[string]any
	sc2 := bufio.NewScanner(strings.NewReader(logs.String()))
	sc2.Buffer(nil, 1<<20)
	for sc2.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc2.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %s", sc2.Text())
		}
		if m["msg"] == "request" {
			access = append(access, m)
		}
	}
	if len(access) != 1 || access[0]["status"] != 400.0 || access[0]["path"] != "/v1/responses" {
		t.Fatalf("access lines %v, want one with status 400:\n%s", access, logs.String())
	}
	if logs.Contains("panic") {
		t.Errorf("the log mentions a panic:\n%s", logs.String())
	}
}

// TestHugeNumberAnswerIsInvalidOutput: a model answer of numbers with huge
// exponents, from an OpenAI-compatible upstream on 127.0.0.1, is invalid
// output (after the one repair attempt), refused within the validation
// budget; an answer whose number made the library panic is invalid output
// too, not "agent panicked". Before, a 10 KB answer of such numbers took
// the validator about 30 CPU-seconds, and the second answer panicked the
// agent (500, "agent panicked").
func TestHugeNumberAnswerIsInvalidOutput(t *testing.T) {
	huge := `{"n":[` + strings.TrimSuffix(strings.Repeat(`1e1000000,`, 1000), ",") + `]}`
	up := newScripted(t, byMessage(map[string]http.HandlerFunc{
		"huge":  wholeOf(huge),
		"panic": wholeOf(`{"n":1e10000000}`),
	}))
	h := start(t, viaOpenAI(up.srv.URL+"/v1", nil))
	for _, c := range []struct{ msg, schema string }{
		{"huge", `{"type":"object","properties":{"n":{"type":"array","items":{"type":"number","minimum":0}}},"required":["n"]}`},
		{"panic", `{"type":"object","properties":{"n":{"type":"number","multipleOf":3}},"required":["n"]}`},
	} {
		t.Run(c.msg, func(t *testing.T) {
			begun := time.Now()
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+c.msg+`","text":{"format":{"type":"json_schema","name":"x","schema":`+c.schema+`}}}`)
			wantError(t, res, 500, "server_error", "run_failed")
			if el := time.Since(begun); el > 2*time.Second {
				t.Errorf("answered after %s; the bound is 2s", el)
			}
			run := h.waitRun(res.Header.Get("x-service-run-id"), func(r runner.Run) bool { return r.Status != runner.StatusRunning })
			if run.Error == nil || !strings.Contains(run.Error.Message, "output has a number") || strings.Contains(run.Error.Message, "panicked") {
				t.Fatalf("run %s ended %s with %+v, want invalid output naming the number", run.ID, run.Status, run.Error)
			}
		})
	}
	if n := len(up.requestsFor("huge")); n != 2 {
		t.Errorf("%d upstream calls for the huge answer, want 2 (the answer and its repair)", n)
	}
}

// TestHugeNumberSchemaOnASocket: a WebSocket turn whose schema has 8,000
// huge-exponent keywords is an error event, 400 invalid_schema naming the
// field, within milliseconds, and the socket serves the next turn. Before,
// the turn held a core for minutes, and every later turn waited behind it.
func TestHugeNumberSchemaOnASocket(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	begun := time.Now()
	ev := last(socketTurn(t, conn, create(`,"input":"x","text":{"format":{"type":"json_schema","name":"x","schema":`+hugeExponentSchema()+`}}`)))
	if el := time.Since(begun); el > 2*time.Second {
		t.Errorf("answered after %s; the bound is 2s", el)
	}
	if ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 || ev.Get("error.code").Str != "invalid_schema" ||
		ev.Get("error.param").Str != "text.format.schema" {
		t.Fatalf("turn with the schema: %.300s", ev.Raw)
	}
	if ok := last(socketTurn(t, conn, create(`,"input":"still here"`))); ok.Get("response.output_text").Str != "You said: still here" {
		t.Fatalf("turn after the refusal: %.300s", ok.Raw)
	}
}
