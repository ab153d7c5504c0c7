package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A native run keeps its events, streamed or not: GET
// /runner/v1/runs/{id}/events replays them after the run ended, with the
// ids and data the streaming client saw, and resumes after Last-Event-ID.
func TestNativeRunEvents(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/runner/v1/runs", `{"stream":true,"input":[{"role":"user","content":"Tell me a story about runedge"}]}`, "x-service-tenant-id", "t1")
	id := checkRunHeaders(t, res.Header)
	streamed := readEvents(t, res.Body)
	res.Body.Close()
	if len(streamed) < 3 {
		t.Fatalf("streamed events: %+v", streamed)
	}
	replay := func(id string, hdr ...string) []sseEvent {
		res := h.do("GET", "/runner/v1/runs/"+id+"/events", "", append([]string{"x-service-tenant-id", "t1"}, hdr...)...)
		defer res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("events of %s: %d %s", id, res.StatusCode, body(t, res))
		}
		return readEvents(t, res.Body)
	}
	got := replay(id)
	if len(got) != len(streamed) {
		t.Fatalf("replayed %d events, the stream had %d: %+v", len(got), len(streamed), got)
	}
	for i := range got {
		if got[i] != streamed[i] {
			t.Errorf("event %d replayed as %+v, streamed as %+v", i, got[i], streamed[i])
		}
	}
	if tail := replay(id, "Last-Event-ID", "1"); len(tail) != len(streamed)-2 || tail[0].ID != "2" {
		t.Errorf("after Last-Event-ID 1: %+v", tail)
	}

	// Without stream, the events are the whole answer's: created, the
	// text in one delta, the end.
	res = h.do("POST", "/runner/v1/runs", nativeBody, "x-service-tenant-id", "t1")
	whole := body(t, res)
	id = checkRunHeaders(t, res.Header)
	evs := replay(id)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Event)
	}
	if strings.Join(names, ",") != "run.created,run.output_text.delta,run.completed" ||
		gjson.Get(evs[1].Data, "delta").Str != gjson.GetBytes(whole, "output").Str ||
		gjson.Get(evs[2].Data, "id").Str != id {
		t.Errorf("events of a run without stream: %+v (reply %s)", evs, whole)
	}
}
