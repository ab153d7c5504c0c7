package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/runner"
)

// What the cases of settingCases show, one function per effect. Each is
// called on a server started from a file (loadFile); a case with a
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

// bytesInFlightCase: a request's bytes are held until its upstream
// request is written. Its upstream reads nothing of a 3.5 MB body until
// told (the write blocks in the socket); beside it a 43-byte body is over
// a bound of the 3.5 MB and 10 bytes: it waits the configured wait, then is
// a retryable 503. Once the upstream reads the body the bytes are given
// back and a request is served. After a reload that raises the bound, a
// request is served beside a held one.
func bytesInFlightCase() settingCase {
	big := `{"model":"service","input":"` + strings.Repeat("word ", 700000) + `"}`
	var mu sync.Mutex
	stall := make(chan struct{})
	// hold starts a run whose upstream request is not written until the
	// returned function is called (at the latest at the test's end).
	hold := func(t *testing.T, h *harness) func() {
		c := make(chan struct{})
		mu.Lock()
		stall = c
		mu.Unlock()
		holdRun(t, h, 1, big)
		var once sync.Once
		release := func() { once.Do(func() { close(c) }) }
		t.Cleanup(release) // before holdRun's, which waits for the run
		return release
	}
	return settingCase{
		settings: []string{"limits.max_bytes_in_flight", "limits.bytes_in_flight_wait"},
		doc: "limits: {max_body_bytes: 8388608, max_bytes_in_flight: " + strconv.Itoa(len(big)+10) + ", bytes_in_flight_wait: 200ms}\n" +
			"provider: {kind: openai, openai: {base_url: $BASE, model: m, max_attempts: 1}}",
		vars: func(t *testing.T) map[string]string {
			// A small receive buffer: the write of an unread body blocks
			// in the socket (loopback's buffers took 3.9 MB otherwise).
			lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			}}
			ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ContentLength > 1<<20 {
					mu.Lock()
					c := stall
					mu.Unlock()
					<-c
				}
				io.Copy(io.Discard, r.Body)
				wholeOf("ok")(w, r)
			}))
			srv.Listener.Close()
			srv.Listener = ln
			srv.Start()
			t.Cleanup(srv.Close)
			return map[string]string{"$BASE": srv.URL + "/v1"}
		},
		show: func(t *testing.T, h *harness) {
			release := hold(t, h)
			if got, _ := sample(t, h.scrape(tokAdmin), "runedge_request_bytes_in_flight"); got != float64(len(big)) {
				t.Errorf("runedge_request_bytes_in_flight = %v beside the held run, want %d", got, len(big))
			}
			began := time.Now()
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"over the bound"}`)
			wantError(t, res, http.StatusServiceUnavailable, "api_error", "unavailable")
			if res.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if el := time.Since(began); el < 200*time.Millisecond || el > 3*time.Second {
				t.Errorf("refused after %s, want after the 200ms wait", el)
			}
			release()
			eventually(t, "the bytes given back once the upstream read the body", func() bool {
				got, _ := sample(t, h.scrape(tokAdmin), "runedge_request_bytes_in_flight")
				return got == 0
			})
			served(t, h, "a request once the held one was sent")
		},
		reload: "limits: {max_bytes_in_flight: 67108864}",
		reloaded: func(t *testing.T, h *harness) {
			hold(t, h)
			served(t, h, "a request beside a held one, the bound raised")
		},
	}
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

// upstreamKey is the upstream's key, which the file names by variable.
const upstreamKey = "sk-from-the-environment"

// keyedUpstream answers only a call with upstreamKey, as a chat
// completion or its stream, with "from upstream".
func keyedUpstream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+upstreamKey {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"bad key","type":"invalid_request_error"}}`))
		return
	}
	b, _ := io.ReadAll(r.Body)
	if gjson.GetBytes(b, "stream").Bool() {
		streamOf("from upstream")(w, r)
		return
	}
	wholeOf("from upstream")(w, r)
}

func failingUpstream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`{"error":{"message":"down","type":"server_error"}}`))
}

// silentUpstream holds its answer until the call goes away (10 s at
// most).
func silentUpstream(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// stallingUpstream sends one event of a stream, then goes silent (10 s at
// most).
func stallingUpstream(w http.ResponseWriter, r *http.Request) {
	sseStart(w)
	sseSend(w, contentChunk("a start"))
	silentUpstream(w, r)
}

// providerCase: the openai provider calls the file's base URL with its
// model, the key from the variable it names, and include_usage on a
// streamed call.
func providerCase() settingCase {
	up := &caseUpstream{scripts: []http.HandlerFunc{keyedUpstream}}
	return settingCase{
		settings: []string{"provider.kind", "provider.openai.base_url", "provider.openai.model", "provider.openai.api_key_env", "provider.openai.include_usage"},
		doc:      "provider: {kind: openai, openai: {base_url: $UPSTREAM, model: file-model, api_key_env: RUNEDGE_TEST_UPSTREAM_KEY, include_usage: true}}",
		env:      map[string]string{"RUNEDGE_TEST_UPSTREAM_KEY": upstreamKey},
		upstream: up,
		show: func(t *testing.T, h *harness) {
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","stream":true}`)
			evs := readEvents(t, res.Body)
			res.Body.Close()
			if n := len(evs); n == 0 || gjson.Get(evs[n-1].Data, "response.output_text").Str != "from upstream" {
				t.Fatalf("a streamed response through the upstream: %d %+v", res.StatusCode, evs)
			}
			sent := up.requests()
			if len(sent) != 1 || gjson.Get(sent[0], "model").Str != "file-model" || !gjson.Get(sent[0], "stream_options.include_usage").Bool() {
				t.Errorf("the upstream was sent %q, want one call for file-model with stream_options.include_usage", sent)
			}
		},
	}
}

func showOneAttempt(up *caseUpstream) func(t *testing.T, h *harness) {
	return func(t *testing.T, h *harness) {
		wantError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`), http.StatusBadGateway, "api_error", "provider_error")
		if n := len(up.requests()); n != 1 {
			t.Errorf("max_attempts 1: %d calls", n)
		}
	}
}

// showBackoff: the retries' waits, each jittered to [d/2, d), add up to
// between lo and hi.
func showBackoff(calls int, lo, hi time.Duration) func(up *caseUpstream) func(t *testing.T, h *harness) {
	return func(up *caseUpstream) func(t *testing.T, h *harness) {
		return func(t *testing.T, h *harness) {
			began := time.Now()
			served(t, h, "the last attempt")
			el := time.Since(began)
			if n := len(up.requests()); n != calls || el < lo || el >= hi {
				t.Errorf("%d calls in %s; want %d in %s to %s", n, el, calls, lo, hi)
			}
		}
	}
}

// showUpstreamTimeout: a streamed call to a silent upstream ends in a
// timeout (a 504, or the stream's error) within a few seconds.
func showUpstreamTimeout(t *testing.T, h *harness) {
	began := time.Now()
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","stream":true}`)
	b := body(t, res)
	if !strings.Contains(string(b), `"code":"timeout"`) {
		t.Errorf("a silent upstream: %d %s, want a timeout", res.StatusCode, b)
	}
	if el := time.Since(began); el > 3*time.Second {
		t.Errorf("a 300 ms upstream timeout answered after %s", el)
	}
}

func caseWithUpstream(settings []string, doc string, scripts []http.HandlerFunc, show func(*caseUpstream) func(*testing.T, *harness)) settingCase {
	up := &caseUpstream{scripts: scripts}
	return settingCase{settings: settings, doc: doc, upstream: up, show: show(up)}
}

// compactionCase: the file's key seals compaction items (its id in them)
// with the secret of the variable it names; a reload to another key
// seals with that one and refuses an item the dropped key sealed.
func compactionCase() settingCase {
	var item string
	secret := func(id string) string { return "secret of key " + id + strings.Repeat(".", 32) }
	return settingCase{
		settings: []string{"compaction.keys[].id", "compaction.keys[].secret_env"},
		doc:      "compaction: {keys: [{id: k1, secret_env: RUNEDGE_TEST_CMP_K1}]}",
		env:      map[string]string{"RUNEDGE_TEST_CMP_K1": secret("k1"), "RUNEDGE_TEST_CMP_K2": secret("k2")},
		show: func(t *testing.T, h *harness) {
			_, reply := h.post("/v1/responses/compact", `{"model":"service","input":"the secret word is lark"}`)
			item = compactItem(t, reply)
			if enc := gjson.Get(item, "encrypted_content").Str; !strings.HasPrefix(enc, "rc1.k1.") {
				t.Errorf("sealed with %.8q, want key k1", enc)
			}
			code, answer := h.post("/v1/responses", `{"model":"service","store":false,"input":[`+item+`,{"role":"user","content":"word?"}]}`)
			if code != 200 || !strings.Contains(gjson.Get(answer, "output_text").Str, "lark") {
				t.Errorf("the sealed item read back: %d %s", code, answer)
			}
		},
		reload: "compaction: {keys: [{id: k2, secret_env: RUNEDGE_TEST_CMP_K2}]}",
		reloaded: func(t *testing.T, h *harness) {
			code, e := h.post("/v1/responses", `{"model":"service","store":false,"input":[`+item+`,{"role":"user","content":"word?"}]}`)
			if code != 400 || gjson.Get(e, "error.param").Str != "input[0].encrypted_content" {
				t.Errorf("an item of the dropped key: %d %s, want 400 naming it", code, e)
			}
			_, reply := h.post("/v1/responses/compact", `{"model":"service","input":"new"}`)
			if enc := gjson.Get(compactItem(t, reply), "encrypted_content").Str; !strings.HasPrefix(enc, "rc1.k2.") {
				t.Errorf("after the reload sealed with %.8q, want key k2", enc)
			}
		},
	}
}

// showPingInterval: a socket that reads nothing answers no ping; at
// websocket.ping_interval its turn is recorded client_stalled, long before
// limits.write_timeout (1 m).
func showPingInterval(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp, "x-service-tenant-id", "deaf"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"`+strings.Repeat("word ", 300)+`"`))); err != nil {
		t.Fatal(err)
	}
	var id string
	eventually(t, "a run", func() bool {
		if runs := h.runsOf("deaf"); len(runs) > 0 {
			id = runs[0].Get("id").Str
		}
		return id != ""
	})
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientStalled {
		t.Errorf("a socket that answers no ping: %s/%s, want cancelled/client_stalled", r.Status, r.StatusReason)
	}
}

// showSocketBytes: events sent behind a turn in flight are held up to
// websocket.max_socket_bytes; past it, each is refused with a 429 error
// event.
func showSocketBytes(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp))
	c.SetReadLimit(8 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"`+strings.Repeat("word ", 40)+`"`))); err != nil {
		t.Fatal(err)
	}
	big := create(`,"input":"` + strings.Repeat(strings.Repeat("x", 999)+" ", 100) + `"`) // 100 KB
	time.Sleep(50 * time.Millisecond)
	const sent = 6
	for range sent {
		if err := c.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	refused := 0
	for done := 0; done < sent+1; {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d turns: %v", done, err)
		}
		switch ev := gjson.ParseBytes(b); ev.Get("type").Str {
		case "response.completed":
			done++
		case "error":
			done++
			if ev.Get("status").Int() == 429 && ev.Get("error.code").Str == "rate_limit_exceeded" {
				refused++
			}
		}
	}
	if refused == 0 {
		t.Errorf("six 100 KB events behind a turn, with a 256 KiB budget: none refused")
	}
}

func showUISession(t *testing.T, h *harness) {
	res := h.uiLogin(tokAdmin)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "runedge_ui" && c.Value != "" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.Secure {
		t.Fatalf("login over plain HTTP with secure_cookie: cookie %v, want Secure", cookie)
	}
	if res, b := h.uiGet("/ui/api/session", cookie); res.StatusCode != 200 {
		t.Fatalf("a fresh session: %d %s", res.StatusCode, b)
	}
	time.Sleep(1200 * time.Millisecond)
	if res, _ := h.uiGet("/ui/api/session", cookie); res.StatusCode == 200 {
		t.Errorf("a session past admin.ui.session_ttl (1s) still serves")
	}
}

func showAdminBodyRaised(t *testing.T, h *harness) {
	if res, b := h.admin("PUT", "/admin/v1/plugins/translate", "application/wasm", make([]byte, 2000), tokAdmin); res.StatusCode == http.StatusRequestEntityTooLarge {
		t.Errorf("a 2000-byte upload after the limit was raised to 4000: %d %s", res.StatusCode, b)
	}
}

// showSocketYoung: with max_age raised, a socket older than the old age
// still runs a turn.
func showSocketYoung(t *testing.T, h *harness) {
	c := openSocket(t, h, bearer(tokApp))
	time.Sleep(1200 * time.Millisecond)
	if ev := last(rawTurn(t, c, create(`,"input":"still young"`))); ev.Get("type").Str != "response.completed" {
		t.Errorf("a turn at 1.2 s with max_age 1h: %s", ev.Raw)
	}
}

// tracingCase: spans go to the file's collector (OTLP/HTTP, plaintext)
// within the batch timeout; with sample_ratio 0 only a caller's sampled
// traceparent, trusted, is recorded.
func tracingCase() settingCase {
	var rcv *otlpReceiver
	return settingCase{
		settings: []string{"tracing.endpoint", "tracing.protocol", "tracing.insecure", "tracing.sample_ratio", "tracing.trust_traceparent", "tracing.batch_timeout"},
		doc:      "tracing: {endpoint: $OTLP, protocol: http, insecure: true, batch_timeout: 20ms, sample_ratio: 0, trust_traceparent: true}",
		vars: func(t *testing.T) map[string]string {
			rcv = newOTLPReceiver(t)
			return map[string]string{"$OTLP": rcv.srv.Listener.Addr().String()}
		},
		show: func(t *testing.T, h *harness) {
			const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
			body(t, res)
			began := time.Now()
			rcv.trace(t, traceID, "POST /v1/responses")
			if el := time.Since(began); el > 2*time.Second {
				t.Errorf("spans exported %s after the reply, with a 20 ms batch timeout", el)
			}
			if r := h.run(res.Header.Get("x-service-run-id")); r.TraceID != traceID {
				t.Errorf("a trusted sampled traceparent: run trace %q, want %s", r.TraceID, traceID)
			}
			res = h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`)
			body(t, res)
			if r := h.run(res.Header.Get("x-service-run-id")); r.TraceID != "" {
				t.Errorf("sample_ratio 0, no traceparent: run trace %q, want none", r.TraceID)
			}
		},
	}
}

// cachingUpstream answers with 100 input tokens, 60 of them cached, and 10
// output tokens.
func cachingUpstream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"prompt_tokens_details":{"cached_tokens":60}}}`))
}

// showModelPrice: the price entry naming the upstream's model wins over
// the provider's, and prices cached input tokens at their own rate:
// 40 × 2 + 60 × 1 + 10 × 8 per million.
func showModelPrice(*caseUpstream) func(t *testing.T, h *harness) {
	return func(t *testing.T, h *harness) {
		served(t, h, "a run", "x-service-tenant-id", "priced")
		res := h.do("GET", "/runner/v1/usage?group_by=tenant&tenant_id=priced", "", "Authorization", "Bearer "+tokAdmin)
		var list api.UsageList
		if err := json.Unmarshal(body(t, res), &list); err != nil || len(list.Data) != 1 {
			t.Fatalf("usage of tenant priced: %v %+v", err, list)
		}
		r := list.Data[0]
		if want := 220e-6; r.CachedTokens != 60 || r.Cost < want*0.999 || r.Cost > want*1.001 {
			t.Errorf("usage %+v: want 60 cached tokens and cost %g", r, want)
		}
	}
}

// showTrustedProxies: behind a trusted proxy (the test's own address),
// the login throttle counts the address X-Forwarded-For names: one that
// guessed is refused, another logs in.
func showTrustedProxies(t *testing.T, h *harness) {
	throttled := false
	for range 40 {
		if h.uiLogin("guess", "X-Forwarded-For", "203.0.113.1").StatusCode == http.StatusTooManyRequests {
			throttled = true
			break
		}
	}
	if !throttled {
		t.Fatal("40 failed logins from one address: never throttled")
	}
	if res := h.uiLogin(tokAdmin, "X-Forwarded-For", "198.51.100.7"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a correct login from another address behind the proxy: %d, want 303", res.StatusCode)
	}
}

// showShutdownGrace: a shutdown with a run in flight that needs seconds
// more ends it at the grace (300 ms), not when it is done.
func showShutdownGrace(t *testing.T, h *harness) {
	holdRun(t, h, 1, slowInput)
	began := time.Now()
	h.shutdown()
	if el := time.Since(began); el > 2*time.Second {
		t.Errorf("a shutdown with a 4 s run in flight and a 300 ms grace took %s", el)
	}
}

// showRetention: the stored input and output of a response whose run
// ended an hour ago are forgotten by store.retention (1m) as a server
// starts (the run stays: the response reads back without its text); a
// fresh one keeps them.
func showRetention(t *testing.T, h *harness) {
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"old"}`)
	old := gjson.GetBytes(body(t, res), "id").Str
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", h.cfg.Store.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`UPDATE runs SET created_at = created_at - 3600, ended_at = ended_at - 3600`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	h = serveConfig(t, h.cfg)
	eventually(t, "the old response's text forgotten", func() bool {
		b := body(t, h.do("GET", "/v1/responses/"+old, ""))
		return gjson.GetBytes(b, "id").Str == old && gjson.GetBytes(b, "output_text").Str == ""
	})
	if b := body(t, h.do("GET", "/v1/responses/"+old+"/input_items", "")); len(gjson.GetBytes(b, "data").Array()) != 0 {
		t.Errorf("the old response's input items: %s", b)
	}
	res = h.do("POST", "/v1/responses", `{"model":"service","input":"new"}`)
	fresh := gjson.GetBytes(body(t, res), "id").Str
	if b := body(t, h.do("GET", "/v1/responses/"+fresh, "")); gjson.GetBytes(b, "output_text").Str != "You said: new" {
		t.Errorf("a fresh response: %s", b)
	}
}

// storeCase: runs are kept in the SQLite file the configuration names,
// and a server started again on it reads them.
func storeCase() settingCase {
	var dir string
	return settingCase{
		settings: []string{"store.driver", "store.path"},
		doc:      "store: {driver: sqlite, path: $DIR/elsewhere.db}",
		vars: func(t *testing.T) map[string]string {
			dir = t.TempDir()
			return map[string]string{"$DIR": dir}
		},
		show: func(t *testing.T, h *harness) {
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"kept"}`)
			id := gjson.GetBytes(body(t, res), "id").Str
			if err := h.shutdown(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "elsewhere.db")); err != nil {
				t.Fatalf("the configured store file: %v", err)
			}
			h = serveConfig(t, h.cfg)
			if b := body(t, h.do("GET", "/v1/responses/"+id, "")); gjson.GetBytes(b, "output_text").Str != "You said: kept" {
				t.Errorf("the response after a restart on the same file: %s", b)
			}
		},
	}
}

// showPluginCallTimeout: the WebAssembly mapping's calls get a budget of
// call_timeout plus call_timeout_per_mib per MiB of input: a small body
// fits 1 ms, a 1 MB one does not fit 2 ms (500 plugin_error).
func showPluginCallTimeout(t *testing.T, h *harness) {
	served(t, h, "a small body")
	big := `{"model":"service","input":"` + strings.Repeat("word ", 200_000) + `"}` // 1 MB
	wantError(t, h.do("POST", "/v1/responses", big), http.StatusInternalServerError, "server_error", "plugin_error")
}
