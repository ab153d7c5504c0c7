package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/runner"
)

// What the cases of settingCases show, one function per effect. Each is
// called on a server started from a file (serveFile); a case with a
// reload calls the second after the running server reloaded a changed
// file, without a restart.

// respond posts a small Responses request with headers and returns its
// status, the body read.
func respond(t *testing.T, h *harness, headers ...string) int {
	t.Helper()
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, headers...)
	body(t, res)
	return res.StatusCode
}

// served fails unless a small Responses request with headers is served.
func served(t *testing.T, h *harness, what string, headers ...string) {
	t.Helper()
	if c := respond(t, h, headers...); c != 200 {
		t.Errorf("%s: %d, want 200", what, c)
	}
}

// eventually retries f (true: done) for up to 5 s.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !f(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
	}
}

// holdRun starts a slow run (the offline provider's token_delay) with
// headers in the background and waits until the server has n runs in
// flight. The run's reply is drained at the end of the test.
func holdRun(t *testing.T, h *harness, n int, reqBody string, headers ...string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("POST", h.URL+"/v1/responses", strings.NewReader(reqBody))
		req.Header.Set("Authorization", "Bearer "+tokApp)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	t.Cleanup(func() { <-done })
	eventually(t, "a run in flight", func() bool { return h.srv.Runs().InFlight() >= n })
}

const slowInput = `{"model":"service","input":"one two three four five six seven eight"}`

func showTenantRate(t *testing.T, h *harness) {
	served(t, h, "t1's first request", "x-service-tenant-id", "t1")
	if c := respond(t, h, "x-service-tenant-id", "t1"); c != http.StatusTooManyRequests {
		t.Errorf("t1 past its tenant burst: %d, want 429", c)
	}
	served(t, h, "another tenant", "x-service-tenant-id", "t2")
}

func showTenantRateReloaded(t *testing.T, h *harness) {
	eventually(t, "t1 served after its rate was raised", func() bool { return respond(t, h, "x-service-tenant-id", "t1") == 200 })
}

func showReadBodyTimeout(t *testing.T, h *harness) {
	c := rawRequest(t, h.URL, "POST", "/v1/responses", tokApp, 1000)
	stop := trickle(c, "{")
	defer stop()
	began := time.Now()
	res, err := readStatus(t, c, 10*time.Second)
	if err != nil || res.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a trickled body: %v %v, want 408", res, err)
	}
	if el := time.Since(began); el > 3*time.Second {
		t.Errorf("a 300 ms body deadline cut the body off after %s", el)
	}
}

// showSlowBodyServed: a body sent in two halves 600 ms apart is served.
func showSlowBodyServed(t *testing.T, h *harness) {
	b := `{"model":"service","input":"slow body"}`
	c := rawRequest(t, h.URL, "POST", "/v1/responses", tokApp, len(b))
	c.Write([]byte(b[:10]))
	time.Sleep(600 * time.Millisecond)
	c.Write([]byte(b[10:]))
	if res, err := readStatus(t, c, 10*time.Second); err != nil || res.StatusCode != 200 {
		t.Errorf("a body within the raised deadline: %v %v, want 200", res, err)
	}
}

func showWriteTimeout(t *testing.T, h *harness) {
	id := stalledStream(t, h)
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientStalled {
		t.Errorf("a client that stopped reading: run %s/%s, want cancelled/client_stalled", r.Status, r.StatusReason)
	}
}

func showMaxInFlight(t *testing.T, h *harness) {
	holdRun(t, h, 1, slowInput)
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "other"),
		http.StatusServiceUnavailable, "api_error", "unavailable")
}

func showMaxInFlightPerTenant(t *testing.T, h *harness) {
	holdRun(t, h, 1, slowInput, "x-service-tenant-id", "busy")
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "busy"),
		http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
	served(t, h, "another tenant", "x-service-tenant-id", "other")
}

func showMaxInFlightPerToken(t *testing.T, h *harness) {
	holdRun(t, h, 1, slowInput, "x-service-tenant-id", "t1")
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "t2"),
		http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
	served(t, h, "another token", "Authorization", "Bearer "+tokAdmin, "x-service-tenant-id", "t2")
}

func showMaxBackground(t *testing.T, h *harness) {
	bg := `{"model":"service","background":true,"input":"one two three four five six seven eight"}`
	res := h.do("POST", "/v1/responses", bg)
	if b := body(t, res); res.StatusCode != 200 {
		t.Fatalf("the first background run: %d %s", res.StatusCode, b)
	}
	wantError(t, h.do("POST", "/v1/responses", bg), http.StatusServiceUnavailable, "api_error", "unavailable")
	served(t, h, "a foreground run beside it")
}

func showRunTimeout(t *testing.T, h *harness) {
	began := time.Now()
	wantError(t, h.do("POST", "/v1/responses", slowInput), http.StatusGatewayTimeout, "api_error", "timeout")
	if el := time.Since(began); el > 3*time.Second {
		t.Errorf("a 300 ms run timeout answered after %s", el)
	}
}

func showReadHeaderTimeout(t *testing.T, h *harness) {
	c := rawConn(t, h.URL)
	c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: runedge\r\n"))
	stop := trickle(c, "X-Slow: 1\r\n")
	defer stop()
	began := time.Now()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	if el := time.Since(began); el > 3*time.Second {
		t.Errorf("trickled headers held the connection for %s past a 500 ms header deadline", el)
	}
}

func showMaxAdminBody(t *testing.T, h *harness) {
	res, b := h.admin("PUT", "/admin/v1/plugins/translate", "application/wasm", make([]byte, 2000), tokAdmin)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2000-byte upload past limits.max_admin_body_bytes 1000: %d %s", res.StatusCode, b)
	}
}

func showMaxHistoryBytes(t *testing.T, h *harness) {
	prev, _ := bigResponse(t, h, 40<<10, "")
	prev, _ = bigResponse(t, h, 40<<10, prev)
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"and now?","previous_response_id":"`+prev+`"}`),
		400, "invalid_body", "previous_response_id")
	small, _ := bigResponse(t, h, 64, "")
	if res := h.do("POST", "/v1/responses", `{"model":"service","input":"and now?","previous_response_id":"`+small+`"}`); res.StatusCode != 200 {
		t.Errorf("a history within the bound: %d %s", res.StatusCode, body(t, res))
	} else {
		body(t, res)
	}
}

func showMaxReferenceBytes(t *testing.T, h *harness) {
	_, out := bigResponse(t, h, 40<<10, "")
	ref := `{"type":"item_reference","id":"` + out + `"}`
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":[`+ref+`,`+ref+`,`+ref+`]}`), 400, "invalid_body", "input[2]")
	if res := h.do("POST", "/v1/responses", `{"model":"service","input":[`+ref+`]}`); res.StatusCode != 200 {
		t.Errorf("one reference within the bound: %d %s", res.StatusCode, body(t, res))
	} else {
		body(t, res)
	}
}

func showMaxStoredEvents(t *testing.T, h *harness) {
	res := h.do("POST", "/v1/responses", `{"model":"service","stream":true,"background":true,"input":"`+strings.Repeat("w ", 100)+`"}`)
	evs := readEvents(t, res.Body)
	res.Body.Close()
	id := gjson.Get(evs[0].Data, "response.id").Str
	h.waitRun(runOf(id), func(r runner.Run) bool { return r.Status.Terminal() })
	stored := readEvents(t, h.do("GET", "/v1/responses/"+id+"?stream=true", "").Body)
	// 100 words streamed one by one (25 ms apart, the stream window
	// 20 ms) are over 100 events; 50 are kept, and the end.
	n := len(stored)
	if n == 0 || n > 50+16 || stored[n-1].Event != "response.completed" ||
		strings.Count(gjson.Get(stored[n-1].Data, "response.output_text").Str, "w") != 100 {
		t.Errorf("a stream of 100 words (%d events live) replays %d events with max_stored_events 50", len(evs), n)
	}
}

func showMaxReplaysPerTenant(t *testing.T, h *harness) {
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("slow ", 200)+`","background":true,"stream":true}`)
	res.Body.Close()
	resp := "resp_" + strings.TrimPrefix(res.Header.Get("x-service-run-id"), "run_")
	first := h.do("GET", "/v1/responses/"+resp+"?stream=true", "")
	defer first.Body.Close()
	if first.StatusCode != 200 {
		t.Fatalf("the first reader: %d", first.StatusCode)
	}
	r := h.do("GET", "/v1/responses/"+resp+"?stream=true", "")
	if b := body(t, r); r.StatusCode != 429 || gjson.GetBytes(b, "error.code").Str != "rate_limit_exceeded" {
		t.Errorf("a second reader with max_replays_per_tenant 1: %d %s", r.StatusCode, b)
	}
}

func showSocketIdleTimeout(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp))
	rawTurn(t, c, create(`,"input":"hi"`))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, b, err := c.Read(ctx); err != nil || gjson.GetBytes(b, "error.code").Str != "websocket_connection_limit_reached" {
		t.Errorf("an idle socket at websocket.idle_timeout: %s %v", b, err)
	}
}

// showSocketNotIdle: with the idle timeout raised, a socket idle for
// 600 ms still runs a turn.
func showSocketNotIdle(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp))
	time.Sleep(600 * time.Millisecond)
	if ev := last(rawTurn(t, c, create(`,"input":"still here"`))); ev.Get("type").Str != "response.completed" {
		t.Errorf("a turn after 600 ms idle: %s", ev.Raw)
	}
}

func showSocketMaxAge(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if _, b, err := c.Read(ctx); err != nil || gjson.GetBytes(b, "error.code").Str != "websocket_connection_limit_reached" {
		t.Fatalf("a socket at websocket.max_age: %s %v", b, err)
	}
	if el := time.Since(began); el > 3*time.Second {
		t.Errorf("a socket of max_age 1s lived %s", el)
	}
}

func showSocketCaps(t *testing.T, h *harness) {
	in := func(tok, tenant string) http.Header { return bearer(tok, "x-service-tenant-id", tenant) }
	openSocket(t, h, in(tokApp, "a"))
	openSocket(t, h, in(tokApp, "a"))
	refusedSocket(t, h, in(tokApp, "a"), 429, "rate_limit_exceeded") // the tenant's 3rd
	openSocket(t, h, in(tokApp, "b"))
	refusedSocket(t, h, in(tokApp, "c"), 429, "rate_limit_exceeded") // the token's 4th
	openSocket(t, h, in(tokAdmin, "c"))
	refusedSocket(t, h, in(tokAdmin, "d"), 503, "unavailable") // the host's 5th
}

func showSocketCapsRaised(t *testing.T, h *harness) {
	openSocket(t, h, bearer(tokAdmin, "x-service-tenant-id", "d"))
}

func showTokens(t *testing.T, h *harness) {
	acme := "Bearer " + tokAcme
	if c := respond(t, h, "Authorization", acme, "x-service-tenant-id", "globex"); c != http.StatusForbidden {
		t.Errorf("a token bound to acme naming globex: %d, want 403", c)
	}
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "Authorization", acme)
	body(t, res)
	if r := h.run(res.Header.Get("x-service-run-id")); r.TenantID != "acme" || r.Actor.Name != "acme-app" {
		t.Errorf("acme's run: tenant %q actor name %q, want acme, acme-app", r.TenantID, r.Actor.Name)
	}
	if c := respond(t, h, "Authorization", "Bearer not-a-token"); c != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d", c)
	}
	if res, b := h.admin("GET", "/admin/v1/plugins", "", nil, tokAcme); res.StatusCode != http.StatusForbidden {
		t.Errorf("the admin API with a token not marked admin: %d %s", res.StatusCode, b)
	}
	if res, b := h.admin("GET", "/admin/v1/plugins", "", nil, tokAdmin); res.StatusCode != 200 {
		t.Errorf("the admin API with an admin token: %d %s", res.StatusCode, b)
	}
}

func showTokenRemoved(t *testing.T, h *harness) {
	if c := respond(t, h, "Authorization", "Bearer "+tokAcme); c != http.StatusUnauthorized {
		t.Errorf("a token the reloaded file no longer has: %d, want 401", c)
	}
	served(t, h, "a token the file keeps")
}

func showMaxTenantLabels(t *testing.T, h *harness) {
	for _, tenant := range []string{"first", "second"} {
		served(t, h, tenant, "x-service-tenant-id", tenant)
	}
	// Both are in metrics.tenants; only the first fits the bound.
	_, b := h.admin("GET", "/metrics", "", nil, tokAdmin)
	if m := string(b); !strings.Contains(m, `tenant="first"`) || strings.Contains(m, `tenant="second"`) || !strings.Contains(m, `tenant="other"`) {
		t.Errorf("with metrics.max_tenant_labels 1 the second tenant is labelled other:\n%s", grepLines(m, "tenant="))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && len(out) < 20 {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func showNarrowBudgets(t *testing.T, h *harness) {
	// tokens: 40 per token "app", per actor u1: the estimate (the input
	// and 50 output tokens) is over either.
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "t1"),
		http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota")
	served(t, h, "another token of the tenant", "Authorization", "Bearer "+tokAdmin, "x-service-tenant-id", "t1")
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "Authorization", "Bearer "+tokAdmin,
		"x-service-tenant-id", "t2", "x-service-actor-id", "u1", "x-service-actor-type", "user"),
		http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota")
	served(t, h, "another actor of the tenant", "Authorization", "Bearer "+tokAdmin,
		"x-service-tenant-id", "t2", "x-service-actor-id", "u2", "x-service-actor-type", "user")
}

func showNarrowBudgetsRaised(t *testing.T, h *harness) {
	served(t, h, "the token's budget raised", "x-service-tenant-id", "t1")
}

// showPrices: the usage ledger costs a run at the configured prices (2 and
// 8 per million input and output tokens), and a cost budget of the tenant
// refuses once its cost is spent.
func showPrices(t *testing.T, h *harness) {
	served(t, h, "the first run", "x-service-tenant-id", "priced")
	res := h.do("GET", "/runner/v1/usage?group_by=tenant", "", "Authorization", "Bearer "+tokAdmin)
	var list api.UsageList
	if err := json.Unmarshal(body(t, res), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.Data {
		if r.TenantID == nil || *r.TenantID != "priced" {
			continue
		}
		found = true
		if cost := float64(r.InputTokens)*2e-6 + float64(r.OutputTokens)*8e-6; r.Cost < cost*0.999 || r.Cost > cost*1.001 || cost == 0 {
			t.Errorf("cost %g, want %g", r.Cost, cost)
		}
	}
	if !found {
		t.Errorf("no usage row for tenant priced: %+v", list)
	}
	// The cost budget (0.0001 a day) has no room for an estimate of 50
	// output tokens at 8 per million after the first run... nor before:
	// a tenant with the budget is refused outright.
	wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "capped"),
		http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota")
}

// rawConn opens a TCP connection to base (http://host:port).
func rawConn(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
