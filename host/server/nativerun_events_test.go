package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
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

// While a native run runs, the events endpoint follows it live: a reader
// that joins mid-stream gets every event from the start, then the rest as
// they come, and the stream ends with the run.
func TestNativeRunEventsLive(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond) })
	res := h.do("POST", "/runner/v1/runs", `{"stream":true,"input":[{"role":"user","content":"one two three four five six seven eight nine ten"}]}`, "x-service-tenant-id", "t1")
	defer res.Body.Close()
	id := checkRunHeaders(t, res.Header)
	follow := h.do("GET", "/runner/v1/runs/"+id+"/events", "", "x-service-tenant-id", "t1")
	defer follow.Body.Close()
	if follow.StatusCode != 200 {
		t.Fatalf("events while running: %d %s", follow.StatusCode, body(t, follow))
	}
	streamed := readEvents(t, res.Body)
	followed := readEvents(t, follow.Body)
	if len(followed) != len(streamed) || len(streamed) < 10 || followed[len(followed)-1].Event != "run.completed" {
		t.Fatalf("followed %d events, streamed %d: %+v", len(followed), len(streamed), followed)
	}
	for i := range followed {
		if followed[i] != streamed[i] {
			t.Errorf("event %d followed as %+v, streamed as %+v", i, followed[i], streamed[i])
		}
	}
}
