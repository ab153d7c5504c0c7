package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// dialSocket opens /v1/responses on h as a WebSocket.
func dialSocket(t *testing.T, h *host) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+strings.TrimPrefix(h.url, "http://")+"/v1/responses",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("socket on %s: %v", h.id, err)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// socketEvent sends a response.create with fields and reads the turn's
// events until its last one (response.completed, .failed, .incomplete or
// error), or until the first event of type stopAt when not "".
func socketEvent(t *testing.T, c *websocket.Conn, fields, stopAt string) ([]gjson.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"service"`+fields+`}`)); err != nil {
		return nil, err
	}
	var evs []gjson.Result
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return evs, err
		}
		ev := gjson.ParseBytes(msg)
		evs = append(evs, ev)
		switch typ := ev.Get("type").Str; typ {
		case stopAt, "response.completed", "response.failed", "response.incomplete", "error":
			return evs, nil
		}
	}
}

// A WebSocket's host is killed with SIGKILL: the socket dies with it, and
// the turn it had in flight ends failed/interrupted once its lease runs
// out. The client reconnects to host B and continues by
// previous_response_id from a stored turn of the dead socket; a store:false
// turn's id, whose state lived on the dead socket only, is the documented
// 400 previous_response_not_found error event (not a 500), and the new
// socket goes on serving.
func TestSocketContinuesOnAnotherHostAfterItsHostDies(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startHost(t, hostSpec{id: "host-a", dsn: dsn, runs: fastLeases})
	b := startHost(t, hostSpec{id: "host-b", dsn: dsn, runs: fastLeases})
	turn := func(c *websocket.Conn, fields string) gjson.Result {
		t.Helper()
		evs, err := socketEvent(t, c, fields, "")
		if err != nil {
			t.Fatalf("turn %s: %v", fields, err)
		}
		return evs[len(evs)-1]
	}

	onA := dialSocket(t, a)
	stored := turn(onA, `,"input":"Remember the colour teal"`)
	if stored.Get("type").Str != "response.completed" {
		t.Fatalf("stored turn on A: %s", stored.Raw)
	}
	storedID := stored.Get("response.id").Str
	unstored := turn(onA, fmt.Sprintf(`,"store":false,"previous_response_id":%q,"input":"and the number seven"`, storedID))
	if unstored.Get("type").Str != "response.completed" {
		t.Fatalf("store:false turn on A: %s", unstored.Raw)
	}
	unstoredID := unstored.Get("response.id").Str
	// A long turn is in flight when A dies.
	evs, err := socketEvent(t, onA, fmt.Sprintf(`,"input":%q`, longText(200)), "response.output_text.delta")
	if err != nil || len(evs) == 0 || evs[0].Get("type").Str != "response.created" {
		t.Fatalf("long turn on A: %v %v", evs, err)
	}
	inFlight := evs[0].Get("response.metadata.service.run_id").Str
	a.kill()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	for err == nil {
		_, _, err = onA.Read(ctx)
	}
	lived := ctx.Err() != nil
	cancel()
	if lived {
		t.Fatal("the socket on A lived on after A was killed")
	}

	onB := dialSocket(t, b)
	next := turn(onB, fmt.Sprintf(`,"previous_response_id":%q,"input":"What colour?"`, storedID))
	resp := next.Get("response")
	if next.Get("type").Str != "response.completed" || resp.Get("previous_response_id").Str != storedID ||
		resp.Get("metadata.service.session_id").Str != stored.Get("response.metadata.service.session_id").Str {
		t.Fatalf("continuing a stored turn of the dead socket on B: %s", next.Raw)
	}
	// The agent was given the stored turn before the new input: the
	// continuation counts more input tokens than the same input alone.
	fresh := turn(onB, `,"input":"What colour?"`)
	if with, alone := resp.Get("usage.input_tokens").Int(), fresh.Get("response.usage.input_tokens").Int(); with <= alone {
		t.Fatalf("the continuation on B counts %d input tokens, the same input alone %d: the stored turn was not given", with, alone)
	}

	gone := turn(onB, fmt.Sprintf(`,"previous_response_id":%q,"input":"What number?"`, unstoredID))
	e := gone.Get("error")
	if gone.Get("type").Str != "error" || gone.Get("status").Int() != http.StatusBadRequest ||
		e.Get("code").Str != "previous_response_not_found" || e.Get("type").Str != "invalid_request_error" ||
		!e.Get("message").Exists() || !e.Get("param").Exists() {
		t.Fatalf("continuing the dead socket's store:false turn on B: %s", gone.Raw)
	}
	if again := turn(onB, `,"input":"still here"`); again.Get("response.output_text").Str != "You said: still here" {
		t.Fatalf("a turn after the error on B: %s", again.Raw)
	}

	// The turn A had in flight is settled by B once its lease runs out.
	if r := waitEnded(t, b, inFlight, 10*time.Second); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("the turn in flight on A: %s/%s, want failed/interrupted", r.Status, r.StatusReason)
	}
}
