package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
)

// TestDeleteStopsRunningBackgroundResponse: DELETE of a background
// response still streaming cancels it; nothing it produces afterwards is
// kept (no output on the run, no stored events), and both events
// endpoints answer 404 for it, live or replayed, even to an admin.
func TestDeleteStopsRunningBackgroundResponse(t *testing.T) {
	h := stateServer(t) // 2 ms a token: the answer below takes about 6 s
	c := tenantClient(h, "t1")
	ctx, cancel := context.WithCancel(context.Background())
	stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "service",
		Input: text(strings.Repeat("word ", 3000)), Background: openai.Bool(true)})
	var id string
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "response.created" {
			id = ev.Response.ID
		}
		if ev.SequenceNumber > 20 {
			break
		}
	}
	cancel() // the run goes on without its client: it is a background one
	stream.Close()
	if !strings.HasPrefix(id, "resp_") {
		t.Fatalf("no response id from the stream: %q", id)
	}
	runID := runOf(id)
	h.waitRun(runID, func(r runner.Run) bool { return r.Status == runner.StatusRunning })

	res := h.do("DELETE", "/v1/responses/"+id, "", "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 || !gjson.GetBytes(b, "deleted").Bool() {
		t.Fatalf("delete: %d %s", res.StatusCode, b)
	}
	run := h.waitRun(runID, func(r runner.Run) bool { return r.Status.Terminal() })
	// Cancelled, not completed: the answer left alone ends completed, in
	// about 6 s (within waitRun's 10 s, later on a loaded machine, which
	// waitRun reports), so the state is the measure, not the time.
	if run.Status != runner.StatusCancelled {
		t.Errorf("deleted running response ended %s/%s; want cancelled", run.Status, run.StatusReason)
	}
	time.Sleep(300 * time.Millisecond) // past a batch's flush interval
	for _, tok := range []string{tokApp, tokAdmin} {
		for _, path := range []string{"/v1/responses/" + id + "?stream=true", "/runner/v1/runs/" + runID + "/events"} {
			res := h.do("GET", path, "", "Authorization", "Bearer "+tok, "x-service-tenant-id", "t1")
			if b := body(t, res); res.StatusCode != 404 || gjson.GetBytes(b, "error.code").Str != "not_found" {
				t.Errorf("GET %s of a deleted response: %d %.200s; want 404 not_found", path, res.StatusCode, b)
			}
		}
	}
	res = h.do("GET", "/runner/v1/runs/"+runID, "", "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 || gjson.GetBytes(b, "output").String() != "" {
		t.Errorf("the deleted response's run kept output written after the delete: %.200s", b)
	}
	if r, err := h.srv.Runs().Get(context.Background(), runner.Scope{Admin: true}, runID); err != nil || r.Output != "" {
		t.Errorf("the deleted response's run row holds %d bytes of output (%v)", len(r.Output), err)
	}
	if evs, err := h.srv.Runs().History().Events(context.Background(), runID, -1, 100); err != nil || len(evs) != 0 {
		t.Errorf("%d events stored for a deleted response (%v)", len(evs), err)
	}
}
