package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestNativeHistory(t *testing.T) {
	h := start(t, nil)
	var ids []string
	for i := 0; i < 5; i++ {
		tenant := "t-a"
		if i%2 == 1 {
			tenant = "t-b"
		}
		res := h.do("POST", "/v1/chat/completions", chatBody, "x-service-tenant-id", tenant)
		ids = append(ids, checkRunHeaders(t, res.Header))
		body(t, res)
	}
	// t-a sees its three runs, newest first, paged two at a time.
	b := body(t, h.do("GET", "/runner/v1/runs?limit=2", "", "x-service-tenant-id", "t-a"))
	if gjson.GetBytes(b, "object").Str != "list" || !gjson.GetBytes(b, "has_more").Bool() ||
		gjson.GetBytes(b, "data.0.id").Str != ids[4] || gjson.GetBytes(b, "data.1.id").Str != ids[2] ||
		gjson.GetBytes(b, "first_id").Str != ids[4] || gjson.GetBytes(b, "last_id").Str != ids[2] {
		t.Fatalf("page 1: %s", b)
	}
	b = body(t, h.do("GET", "/runner/v1/runs?limit=2&after="+ids[2], "", "x-service-tenant-id", "t-a"))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 1 || gjson.GetBytes(b, "data.0.id").Str != ids[0] ||
		gjson.GetBytes(b, "has_more").Bool() {
		t.Fatalf("page 2 (%d runs): %s", n, b)
	}
	run := gjson.GetBytes(b, "data.0")
	for _, k := range []string{"id", "object", "status", "status_reason", "session_id", "thread_id", "actor.id",
		"actor.type", "actor.name", "tenant_id", "endpoint", "model", "created_at", "started_at", "ended_at", "usage", "error",
		"duration_ms", "time_to_first_token_ms"} {
		if !run.Get(k).Exists() {
			t.Fatalf("run object lacks %s: %s", k, run.Raw)
		}
	}
	// Tenancy: another tenant's run is not found; a filter naming another
	// tenant matches nothing; the admin sees everything.
	wantError(t, h.do("GET", "/runner/v1/runs/"+ids[1], "", "x-service-tenant-id", "t-a"), 404, "invalid_request_error", "not_found")
	wantError(t, h.do("GET", "/runner/v1/runs/run_unknown", "", "x-service-tenant-id", "t-a"), 404, "invalid_request_error", "not_found")
	b = body(t, h.do("GET", "/runner/v1/runs?tenant_id=t-b", "", "x-service-tenant-id", "t-a"))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 0 {
		t.Fatalf("t-a listed t-b's runs: %s", b)
	}
	b = body(t, h.do("GET", "/runner/v1/runs?tenant_id=t-b", "", "Authorization", "Bearer "+tokAdmin))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 2 {
		t.Fatalf("admin sees %d t-b runs: %s", n, b)
	}
	// Filters: session and status.
	sess := gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs/"+ids[0], "", "x-service-tenant-id", "t-a")), "session_id").Str
	b = body(t, h.do("GET", "/runner/v1/runs?session_id="+sess, "", "x-service-tenant-id", "t-a"))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 1 {
		t.Fatalf("session filter: %s", b)
	}
	b = body(t, h.do("GET", "/runner/v1/runs?status=failed", "", "x-service-tenant-id", "t-a"))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 0 {
		t.Fatalf("status filter: %s", b)
	}
	wantError(t, h.do("GET", "/runner/v1/runs?limit=0", ""), 400, "invalid_request_error", "invalid_body")
	wantError(t, h.do("GET", "/runner/v1/runs?status=sleeping", ""), 400, "invalid_request_error", "invalid_body")
}

// A request naming a session continues it: same session, a new thread;
// naming the thread continues that thread. Another tenant cannot.
func TestSessionContinuation(t *testing.T) {
	h := start(t, nil)
	first := h.do("POST", "/v1/responses", `{"model":"service","input":"hi"}`, "x-service-tenant-id", "t-a")
	body(t, first)
	sess, thread := first.Header.Get("X-Service-Session-Id"), first.Header.Get("X-Service-Thread-Id")

	res := h.do("POST", "/v1/responses", `{"model":"service","input":"again"}`, "x-service-tenant-id", "t-a",
		"x-service-session-id", sess, "x-service-thread-id", thread)
	body(t, res)
	if res.StatusCode != 200 || res.Header.Get("X-Service-Session-Id") != sess || res.Header.Get("X-Service-Thread-Id") != thread {
		t.Fatalf("continuation: %d session %s thread %s", res.StatusCode, res.Header.Get("X-Service-Session-Id"), res.Header.Get("X-Service-Thread-Id"))
	}
	res = h.do("POST", "/v1/responses", `{"model":"service","input":"new thread"}`, "x-service-tenant-id", "t-a",
		"x-service-session-id", sess)
	body(t, res)
	if res.Header.Get("X-Service-Session-Id") != sess || res.Header.Get("X-Service-Thread-Id") == thread {
		t.Fatal("a session without a thread should get a new thread in that session")
	}
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"steal"}`, "x-service-tenant-id", "t-b",
		"x-service-session-id", sess), 404, "invalid_request_error", "not_found")

	// The first run opened its session and thread under its own suffix
	// (docs/api.md), and the session lists all three runs, the first
	// last, for its tenant only.
	run := first.Header.Get("X-Service-Run-Id")
	if x := strings.TrimPrefix(run, "run_"); sess != "sess_"+x || thread != "thread_"+x {
		t.Fatalf("run %s opened session %s and thread %s, not its own", run, sess, thread)
	}
	b := body(t, h.do("GET", "/runner/v1/runs?session_id="+sess, "", "x-service-tenant-id", "t-a"))
	if ids := gjson.GetBytes(b, "data.#.id").Array(); len(ids) != 3 || ids[2].String() != run {
		t.Fatalf("the session's runs: %s", b)
	}
	b = body(t, h.do("GET", "/runner/v1/runs?session_id="+sess, "", "x-service-tenant-id", "t-b"))
	if n := len(gjson.GetBytes(b, "data").Array()); n != 0 {
		t.Fatalf("another tenant lists the session's runs: %s", b)
	}
}
