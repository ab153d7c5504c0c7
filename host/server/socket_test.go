package server

import (
	"context"
	"encoding/json"
	"errors"

	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// sdkSocket opens /v1/responses as a WebSocket with the official Go SDK.
func sdkSocket(t *testing.T, h *harness) *responses.ResponseConnection {
	t.Helper()
	client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := client.Responses.Connect(ctx, responses.ResponseConnectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// socketTurn sends one client event and reads the turn's events up to its
// terminal one (response.completed, .failed, .incomplete, or error).
func socketTurn(t *testing.T, conn *responses.ResponseConnection, event string) []gjson.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := conn.SendRaw(ctx, json.RawMessage(event)); err != nil {
		t.Fatal(err)
	}
	var evs []gjson.Result
	for {
		raw, err := conn.RecvRaw(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		ev := gjson.ParseBytes(raw)
		evs = append(evs, ev)
		switch ev.Get("type").Str {
		case "response.completed", "response.failed", "response.incomplete", "error":
			return evs
		}
	}
}

func last(evs []gjson.Result) gjson.Result { return evs[len(evs)-1] }

// create is a response.create event.
func create(fields string) string {
	return `{"type":"response.create","model":"service"` + fields + `}`
}

func TestSocketSequentialTurns(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	first := socketTurn(t, conn, create(`,"input":"Hello socket","instructions":"Be brief."`))
	// The SSE events' objects, one per message, numbered from 0.
	var types []string
	for i, ev := range first {
		types = append(types, ev.Get("type").Str)
		if n := ev.Get("sequence_number"); !n.Exists() || int(n.Int()) != i {
			t.Fatalf("event %d (%s) has sequence_number %s", i, ev.Get("type").Str, n.Raw)
		}
	}
	want := []string{"response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	if strings.Join(types[:4], " ") != strings.Join(want, " ") || types[len(types)-1] != "response.completed" {
		t.Fatalf("event types %v", types)
	}
	done := last(first).Get("response")
	if done.Get("output_text").Str != "You said: Hello socket" {
		t.Fatalf("first turn: %s", done.Raw)
	}
	// A stored response continues from the store, on the same socket.
	second := socketTurn(t, conn, create(`,"input":"And again","previous_response_id":"`+done.Get("id").Str+`"`))
	next := last(second).Get("response")
	if last(second).Get("type").Str != "response.completed" || next.Get("previous_response_id").Str != done.Get("id").Str {
		t.Fatalf("second turn: %s", last(second).Raw)
	}
	// Each turn is its own durable run, in one session.
	r1 := h.run(done.Get("metadata.service.run_id").Str)
	r2 := h.run(next.Get("metadata.service.run_id").Str)
	if r1.ID == r2.ID || r1.Status != runner.StatusCompleted || r2.Status != runner.StatusCompleted ||
		r1.SessionID != r2.SessionID || r1.Endpoint != "responses" {
		t.Fatalf("runs %+v %+v", r1, r2)
	}
}

func TestSocketStoreFalseContinuation(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	first := last(socketTurn(t, conn, create(`,"store":false,"input":"Remember the colour teal"`))).Get("response")
	id1 := first.Get("id").Str
	if h.do("GET", "/v1/responses/"+id1, "").StatusCode != http.StatusNotFound {
		t.Fatal("a store:false response is in the store")
	}
	// Continued on the same socket from the connection's state; this turn
	// is stored, so its input items show what the agent was given.
	second := last(socketTurn(t, conn, create(`,"input":"What colour?","previous_response_id":"`+id1+`"`)))
	resp := second.Get("response")
	if second.Get("type").Str != "response.completed" || resp.Get("previous_response_id").Str != id1 {
		t.Fatalf("continuation: %s", second.Raw)
	}
	if resp.Get("metadata.service.session_id").Str != first.Get("metadata.service.session_id").Str {
		t.Fatal("the continuation left its session")
	}
	items := body(t, h.do("GET", "/v1/responses/"+resp.Get("id").Str+"/input_items?order=asc", ""))
	texts := gjson.GetBytes(items, "data.#.content.0.text").Array()
	if len(texts) != 3 || texts[0].Str != "Remember the colour teal" || texts[1].Str != "You said: Remember the colour teal" || texts[2].Str != "What colour?" {
		t.Fatalf("input items of the continuation: %s", items)
	}
	// Another socket does not have that state.
	other := sdkSocket(t, h)
	ev := last(socketTurn(t, other, create(`,"input":"What colour?","previous_response_id":"`+id1+`"`)))
	if ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 || ev.Get("error.code").Str != "previous_response_not_found" {
		t.Fatalf("on a new socket: %s", ev.Raw)
	}
}

func TestSocketFailedContinuationEvicts(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	id1 := last(socketTurn(t, conn, create(`,"store":false,"input":"hi"`))).Get("response.id").Str
	// A tool result that answers no call: refused (400) after expansion.
	bad := last(socketTurn(t, conn, create(`,"store":false,"previous_response_id":"`+id1+`","input":[{"type":"function_call_output","call_id":"call_nope","output":"x"}]`)))
	if bad.Get("type").Str != "error" || bad.Get("status").Int() != 400 {
		t.Fatalf("bad continuation: %s", bad.Raw)
	}
	again := last(socketTurn(t, conn, create(`,"store":false,"previous_response_id":"`+id1+`","input":"hi again"`)))
	if again.Get("error.code").Str != "previous_response_not_found" {
		t.Fatalf("after a failed continuation the state is still there: %s", again.Raw)
	}
}

func TestSocketErrorThenGoodTurn(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	for _, tc := range []struct {
		event, code string
		status      int64
	}{
		{`{"type":"response.create","model":"gpt-nope","input":"x"}`, "model_not_found", 404},
		{`{"type":"session.update"}`, "invalid_body", 400},
		{`not json`, "invalid_body", 400},
		{create(`,"input":"x","background":true`), "unsupported_parameter", 400},
	} {
		ev := last(socketTurn(t, conn, tc.event))
		if ev.Get("type").Str != "error" || ev.Get("status").Int() != tc.status || ev.Get("error.code").Str != tc.code ||
			!ev.Get("error.message").Exists() || !ev.Get("error.param").Exists() || ev.Get("error.type").Str == "" {
			t.Fatalf("%s: %s", tc.event, ev.Raw)
		}
	}
	// The SDK reads the error event as its typed error event.
	ctx := context.Background()
	conn.SendRaw(ctx, json.RawMessage(`{"type":"response.create","model":"gpt-nope","input":"x"}`))
	ev, err := conn.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := ev.AsResponsesServerEventResponseWsError(); e.Status != 404 || e.Error.Code != "model_not_found" {
		t.Fatalf("typed error event: %+v", e)
	}
	ok := last(socketTurn(t, conn, create(`,"input":"still here"`)))
	if ok.Get("response.output_text").Str != "You said: still here" {
		t.Fatalf("turn after errors: %s", ok.Raw)
	}
}

// rawSocket dials /v1/responses with coder/websocket and the given headers.
func rawSocket(t *testing.T, h *harness, hdr http.Header, client *http.Client) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return websocket.Dial(ctx, strings.Replace(h.URL, "http", "ws", 1)+"/v1/responses", &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: client})
}

func bearer(tok string, kv ...string) http.Header {
	hd := http.Header{"Authorization": {"Bearer " + tok}}
	for i := 0; i+1 < len(kv); i += 2 {
		hd.Set(kv[i], kv[i+1])
	}
	return hd
}

func TestSocketAuthBeforeUpgrade(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct {
		hdr    http.Header
		status int
		code   string
	}{
		{http.Header{}, 401, "invalid_api_key"},
		{bearer("wrong"), 401, "invalid_api_key"},
		{bearer(tokAcme, "X-Service-Tenant-Id", "globex"), 403, "tenant_forbidden"},
	} {
		c, res, err := rawSocket(t, h, tc.hdr, nil)
		if err == nil {
			c.CloseNow()
			t.Fatalf("%v: upgraded", tc.hdr)
		}
		if res == nil || res.StatusCode != tc.status || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%v: %v %v", tc.hdr, res, err)
		}
		if b := body(t, res); gjson.GetBytes(b, "error.code").Str != tc.code {
			t.Fatalf("%v: %s", tc.hdr, b)
		}
	}
	// A plain GET keeps its answer.
	res := h.do("GET", "/v1/responses", "")
	if res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
		t.Fatalf("plain GET: %d %v", res.StatusCode, res.Header)
	}
	res.Body.Close()
}

// firstEvent sends event on c and reads its first server event.
func firstEvent(t *testing.T, c *websocket.Conn, event string) gjson.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(event)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return gjson.ParseBytes(b)
}

func TestSocketCloseCancelsItsRun(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(30 * time.Millisecond) })
	long := create(`,"input":"` + strings.Repeat("word ", 300) + `"`)
	other, _, err := rawSocket(t, h, bearer(tokApp), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseNow()
	otherID := firstEvent(t, other, long).Get("response.metadata.service.run_id").Str
	c, _, err := rawSocket(t, h, bearer(tokApp), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := firstEvent(t, c, long).Get("response.metadata.service.run_id").Str
	c.Close(websocket.StatusNormalClosure, "bye")
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("closed socket's run: %s/%s", r.Status, r.StatusReason)
	}
	if o := h.run(otherID); o.Status.Terminal() {
		t.Fatalf("the other socket's run ended too: %s/%s", o.Status, o.StatusReason)
	}
}

func TestSocketAgeLimit(t *testing.T) {
	h := start(t, func(c *config.Config) { age := config.Dur(700 * time.Millisecond); c.WebSocket.MaxAge = &age })
	conn := sdkSocket(t, h)
	socketTurn(t, conn, create(`,"input":"hi"`))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := conn.RecvRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev := gjson.ParseBytes(raw); ev.Get("error.code").Str != "websocket_connection_limit_reached" {
		t.Fatalf("at the age limit: %s", raw)
	}
	_, err = conn.RecvRaw(ctx)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("closed with %v", err)
	}
}

func TestSocketStalledReaderIsCutOff(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.WriteTimeout = config.Dur(500 * time.Millisecond)
		c.Limits.RunTimeout = config.Dur(time.Minute)
	})
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}}
	c, _, err := rawSocket(t, h, bearer(tokApp), client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"`+strings.Repeat("w ", 200_000)+`"`))); err != nil {
		t.Fatal(err)
	}
	// Never read; the run shows up in the native API and ends stalled.
	began := time.Now()
	var id string
	for id == "" {
		res := h.do("GET", "/runner/v1/runs?limit=1", "", "Authorization", "Bearer "+tokAdmin)
		id = gjson.GetBytes(body(t, res), "data.0.id").Str
		if time.Since(began) > 10*time.Second {
			t.Fatal("no run")
		}
	}
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientStalled {
		t.Fatalf("stalled socket's run: %s/%s", r.Status, r.StatusReason)
	}
}

func TestSocketPrewarm(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	warm := socketTurn(t, conn, create(`,"generate":false,"store":false,"instructions":"Be brief.","input":"Remember teal","tools":[]`))
	if len(warm) != 2 || warm[0].Get("type").Str != "response.created" {
		t.Fatalf("pre-warm: %v", warm)
	}
	resp := last(warm).Get("response")
	if resp.Get("status").Str != "completed" || len(resp.Get("output").Array()) != 0 || resp.Get("instructions").Str != "Be brief." {
		t.Fatalf("pre-warm response: %s", resp.Raw)
	}
	next := last(socketTurn(t, conn, create(`,"input":"Go","previous_response_id":"`+resp.Get("id").Str+`"`)))
	if next.Get("type").Str != "response.completed" || next.Get("response.previous_response_id").Str != resp.Get("id").Str {
		t.Fatalf("after the pre-warm: %s", next.Raw)
	}
	items := body(t, h.do("GET", "/v1/responses/"+next.Get("response.id").Str+"/input_items?order=asc", ""))
	if texts := gjson.GetBytes(items, "data.#.content.0.text").Array(); len(texts) != 2 || texts[0].Str != "Remember teal" {
		t.Fatalf("input items after the pre-warm: %s", items)
	}
}

func TestSocketShutdownDrains(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond)
		c.Limits.ShutdownGrace = config.Dur(20 * time.Second)
	})
	c, _, err := rawSocket(t, h, bearer(tokApp), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	firstEvent(t, c, create(`,"input":"`+strings.Repeat("word ", 40)+`"`))
	stopped := make(chan error, 1)
	go func() { stopped <- h.shutdown() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var terminal string
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusGoingAway {
				t.Fatalf("closed with %v", err)
			}
			break
		}
		if typ := gjson.GetBytes(b, "type").Str; strings.HasPrefix(typ, "response.completed") {
			terminal = typ
		}
	}
	if terminal != "response.completed" {
		t.Fatal("the turn in flight did not finish before the socket closed")
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// The rate limits count the upgrade and every turn; a limited turn is an
// error event (429) and the socket stays open.
func TestSocketRateLimitCountsSocketsAndTurns(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.RatePerSecond, c.Limits.Burst = 0.001, 3 })
	conn := sdkSocket(t, h)  // 1: the upgrade
	for i := 0; i < 2; i++ { // 2, 3: two turns
		if ev := last(socketTurn(t, conn, create(`,"input":"hi"`))); ev.Get("type").Str != "response.completed" {
			t.Fatalf("turn %d: %s", i, ev.Raw)
		}
	}
	ev := last(socketTurn(t, conn, create(`,"input":"hi"`)))
	if ev.Get("type").Str != "error" || ev.Get("status").Int() != 429 || ev.Get("error.code").Str != "rate_limit_exceeded" {
		t.Fatalf("fourth request: %s", ev.Raw)
	}
	// A pre-warm counts too, and a new socket is refused before upgrading.
	if ev := last(socketTurn(t, conn, create(`,"generate":false,"input":"hi"`))); ev.Get("status").Int() != 429 {
		t.Fatalf("pre-warm over the limit: %s", ev.Raw)
	}
	if _, res, err := rawSocket(t, h, bearer(tokApp), nil); err == nil || res == nil || res.StatusCode != 429 {
		t.Fatalf("a socket over the limit: %v %v", res, err)
	}
}

// Pings keep an idle socket open; a peer that answers none is closed.
func TestSocketPings(t *testing.T) {
	h := start(t, func(c *config.Config) { p := config.Dur(100 * time.Millisecond); c.WebSocket.PingInterval = &p })
	conn := sdkSocket(t, h) // the SDK's reader answers pings
	time.Sleep(700 * time.Millisecond)
	if ev := last(socketTurn(t, conn, create(`,"input":"after a pause"`))); ev.Get("type").Str != "response.completed" {
		t.Fatalf("after idling: %s", ev.Raw)
	}
	deaf, _, err := rawSocket(t, h, bearer(tokApp), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.CloseNow()
	time.Sleep(700 * time.Millisecond) // not reading: no pong
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := deaf.Read(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a socket that answers no ping is still open: %v", err)
	}
}

// Socket turns are counted as requests (method WEBSOCKET) with their
// runs; the upgrade itself is a 101, not a request's latency.
func TestSocketMetrics(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Admin.Listen = "127.0.0.1:0" })
	conn := sdkSocket(t, h)
	socketTurn(t, conn, create(`,"input":"one"`))
	socketTurn(t, conn, `{"type":"response.create","model":"nope","input":"two"}`)
	fams := h.scrape(tokAdmin)
	if n, _ := sample(t, fams, "runedge_http_requests_total", "endpoint=responses", "method=WEBSOCKET", "status=200"); n != 1 {
		t.Fatalf("200 turns counted %v", n)
	}
	if n, _ := sample(t, fams, "runedge_http_requests_total", "endpoint=responses", "method=WEBSOCKET", "status=404"); n != 1 {
		t.Fatalf("404 turns counted %v", n)
	}
	if n, _ := sample(t, fams, "gen_ai_server_request_duration_seconds", "endpoint=responses"); n != 2 {
		t.Fatalf("latency observations %v, want the two turns", n)
	}
}

// A socket turn is traced like a POST: a span "WEBSOCKET /v1/responses" in
// the trace the upgrade continued, with the stage spans under it and the
// run's attributes.
func TestSocketTracing(t *testing.T) {
	rcv := newOTLPReceiver(t)
	h := start(t, rcv.config)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	c, _, err := rawSocket(t, h, bearer(tokApp, "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"traced"`))); err != nil {
		t.Fatal(err)
	}
	var runID string
	for runID == "" {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(b, "type").Str == "response.completed" {
			runID = gjson.GetBytes(b, "response.metadata.service.run_id").Str
		}
	}
	root := "WEBSOCKET /v1/responses"
	spans, _ := rcv.trace(t, traceID, append([]string{root}, stageSpans...)...)
	turn := spans[root]
	if got := attr(turn, "service.run_id"); got != runID {
		t.Fatalf("turn span run id %v, want %s", got, runID)
	}
	for _, n := range stageSpans {
		if parentID(spans[n]) != spanID(turn) {
			t.Fatalf("stage %s is not under the turn's span", n)
		}
	}
}

// A broken handshake is refused in JSON, with the header it lacks.
func TestSocketHandshakeErrors(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct {
		headers []string
		status  int
		param   string
	}{
		{[]string{"Upgrade", "websocket", "Connection", "keep-alive"}, 400, "Connection"},
		{[]string{"Upgrade", "websocket", "Connection", "Upgrade", "Sec-WebSocket-Version", "13"}, 400, "Sec-WebSocket-Key"},
		{[]string{"Upgrade", "websocket", "Connection", "Upgrade", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version", "8"}, 400, "Sec-WebSocket-Version"},
	} {
		res := h.do("GET", "/v1/responses", "", tc.headers...)
		b := body(t, res)
		if res.StatusCode != tc.status || res.Header.Get("Content-Type") != "application/json" || gjson.GetBytes(b, "error.param").Str != tc.param {
			t.Fatalf("%v: %d %s", tc.headers, res.StatusCode, b)
		}
		if res.Header.Get("Sec-WebSocket-Version") != "13" {
			t.Fatalf("refused without Sec-WebSocket-Version: %v", res.Header)
		}
	}
}

// Pings during a turn whose tokens are further apart than write_timeout
// do not meet a stale write deadline: the turn completes.
func TestSocketSlowTurnWithPings(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Limits.WriteTimeout = config.Dur(300 * time.Millisecond)
		c.Provider.Offline.TokenDelay = config.Dur(500 * time.Millisecond)
		p := config.Dur(100 * time.Millisecond)
		c.WebSocket.PingInterval = &p
	})
	conn := sdkSocket(t, h)
	if ev := last(socketTurn(t, conn, create(`,"input":"slow one"`))); ev.Get("type").Str != "response.completed" {
		t.Fatalf("slow turn: %s", ev.Raw)
	}
}
