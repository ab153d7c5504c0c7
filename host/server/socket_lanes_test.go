package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// laneTurns receives n turns on a lane through openai-go's ResponseLane:
// the output_text of each terminal Response, in order, and when the last
// ended. Every event must echo the lane's stream_id.
func laneTurns(t *testing.T, ctx context.Context, lane *responses.ResponseLane, id string, n int) ([]string, time.Time) {
	var texts []string
	for len(texts) < n {
		ev, err := lane.Recv(ctx)
		if err != nil {
			t.Errorf("lane %s after %d turns: %v", id, len(texts), err)
			return texts, time.Time{}
		}
		if got := gjson.Get(ev.RawJSON(), "stream_id").Str; got != id {
			t.Errorf("lane %s: event %s has stream_id %q", id, ev.Type, got)
		}
		switch ev.Type {
		case "response.completed":
			texts = append(texts, ev.AsResponseCompleted().Response.OutputText())
		case "response.failed", "response.incomplete", "error":
			t.Errorf("lane %s: %s", id, ev.RawJSON())
			return texts, time.Time{}
		}
	}
	return texts, time.Now()
}

// response.create with stream_id: openai-go's Lane receives its events
// (each echoes the stream_id); the turns of one lane run in order, those
// of another lane alongside: a short turn on lane b ends while a long one
// on lane a still runs.
func TestSocketLanes(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(10 * time.Millisecond) })
	conn := sdkSocket(t, h)
	a, err := conn.Lane("lane-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := conn.Lane("lane-b")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	long := strings.TrimSpace(strings.Repeat("word ", 150))
	for _, ev := range []string{
		create(`,"stream_id":"lane-a","input":"` + long + `"`),
		create(`,"stream_id":"lane-a","input":"second on a"`),
		create(`,"stream_id":"lane-b","input":"only on b"`),
	} {
		if err := conn.SendRaw(ctx, json.RawMessage(ev)); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		texts []string
		at    time.Time
	}
	onA := make(chan result, 1)
	go func() { texts, at := laneTurns(t, ctx, a, "lane-a", 2); onA <- result{texts, at} }()
	bTexts, bAt := laneTurns(t, ctx, b, "lane-b", 1)
	ra := <-onA
	if len(bTexts) != 1 || bTexts[0] != "You said: only on b" {
		t.Fatalf("lane b: %q", bTexts)
	}
	if len(ra.texts) != 2 || ra.texts[0] != "You said: "+long || ra.texts[1] != "You said: second on a" {
		t.Fatalf("lane a, in order: %q", ra.texts)
	}
	if !bAt.Before(ra.at) {
		t.Fatalf("lane b ended %v after lane a: the lanes did not run side by side", bAt.Sub(ra.at))
	}
	// FinalResponse on a lane, and the connection's own reader for a turn
	// without stream_id, on the same socket.
	if err := conn.SendRaw(ctx, json.RawMessage(create(`,"stream_id":"lane-b","input":"again on b"`))); err != nil {
		t.Fatal(err)
	}
	resp, err := b.FinalResponse(ctx)
	if err != nil || resp.OutputText() != "You said: again on b" {
		t.Fatalf("FinalResponse on lane b: %v %v", resp, err)
	}
	if ev := last(socketTurn(t, conn, create(`,"input":"no lane"`))); ev.Get("response.output_text").Str != "You said: no lane" || ev.Get("stream_id").Exists() {
		t.Fatalf("a turn without stream_id: %s", ev.Raw)
	}
	// A stream_id openai-go would refuse is refused here too, naming it.
	if ev := last(socketTurn(t, conn, create(`,"stream_id":"a b","input":"x"`))); ev.Get("error.param").Str != "stream_id" || ev.Get("status").Int() != 400 {
		t.Fatalf("a bad stream_id: %s", ev.Raw)
	}
}

// response.steer cannot add input to a durable run whose input is
// recorded: it is answered with openai-go's response.steer.failed event,
// code steering_not_supported, the input handed back; the socket goes on.
func TestSocketSteerUnsupported(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	steer := responses.ResponsesClientEventUnionParam{OfResponseSteer: &responses.ResponseSteerEventParam{
		PreviousResponseID: "resp_abc",
		Input:              responses.ResponseSteerInputUnionParam{OfString: openai.String("and also this")},
	}}
	if err := conn.Send(ctx, steer); err != nil {
		t.Fatal(err)
	}
	ev, err := conn.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "response.steer.failed" {
		t.Fatalf("answer to response.steer: %s", ev.RawJSON())
	}
	raw := gjson.Parse(ev.RawJSON())
	if raw.Get("error.code").Str != "steering_not_supported" || !strings.Contains(raw.Get("error.message").Str, "response.steer") ||
		raw.Get("steer.input").Str != "and also this" || raw.Get("steer.previous_response_id").Str != "resp_abc" {
		t.Fatalf("response.steer.failed: %s", ev.RawJSON())
	}
	if ev := last(socketTurn(t, conn, create(`,"input":"after the steer"`))); ev.Get("type").Str != "response.completed" {
		t.Fatalf("after the steer: %s", ev.Raw)
	}
}
