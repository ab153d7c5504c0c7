package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// TestStreamReplayBounded: a background stream of 100,000 deltas keeps at
// most limits.history.max_stored_events (20,000) of them, and still ends
// with its done events and response.completed, which carry the whole
// text; four concurrent resumes asking for the stream's last events read
// from their cursor, not the whole stream (heap growth and time asserted).
func TestStreamReplayBounded(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", fmt.Sprintf(`{"model":"service","input":%q,"background":true,"stream":true}`,
		strings.Repeat("a ", 100000)))
	if res.StatusCode != 200 {
		t.Fatalf("background stream: %d %s", res.StatusCode, body(t, res))
	}
	live := readEvents(t, res.Body)
	res.Body.Close()
	final := live[len(live)-1]
	last := gjson.Get(final.Data, "sequence_number").Int()
	id := gjson.Get(live[0].Data, "response.id").Str
	if final.Event != "response.completed" || len(gjson.Get(final.Data, "response.output_text").Str) < 200000 {
		t.Fatalf("the stream ends with %s (%d bytes)", final.Event, len(final.Data))
	}
	run := runOf(id)
	h.waitRun(run, func(r runner.Run) bool { return r.Status.Terminal() })

	stored := readEvents(t, h.do("GET", "/v1/responses/"+id+"?stream=true", "").Body)
	if n := len(stored); n > runner.DefaultMaxStoredEvents+16 || stored[n-1].Event != "response.completed" ||
		gjson.Get(stored[n-1].Data, "sequence_number").Int() != last {
		t.Errorf("stored %d events of %d, the last %s; want at most %d, ending with response.completed", n, last+1,
			stored[n-1].Event, runner.DefaultMaxStoredEvents)
	}

	// The operator page shows the first 2,000 events, read in pages.
	cookie := h.uiSession()
	w := watchHeap()
	ures, ub := h.uiGet("/ui/api/runs/"+run+"/events", cookie)
	upeak, ualloc := w.done()
	t.Logf("operator page events of a %d-event run: heap +%.1f MiB, %.1f MiB allocated", last+1, upeak, ualloc)
	if ures.StatusCode != 200 || len(gjson.GetBytes(ub, "data").Array()) != 2000 || !gjson.GetBytes(ub, "has_more").Bool() || upeak > 16 {
		t.Errorf("operator page events: %d, %d events, has_more %v, heap +%.1f MiB; want 2000, more, under 16 MiB",
			ures.StatusCode, len(gjson.GetBytes(ub, "data").Array()), gjson.GetBytes(ub, "has_more").Bool(), upeak)
	}

	w = watchHeap()
	var wg sync.WaitGroup
	got := make([][]sseEvent, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.do("GET", fmt.Sprintf("/v1/responses/%s?stream=true&starting_after=%d", id, last-9), "")
			defer res.Body.Close()
			if res.StatusCode != 200 {
				t.Errorf("resume %d: %d %s", i, res.StatusCode, body(t, res))
				return
			}
			got[i] = readEvents(t, res.Body)
		}()
	}
	wg.Wait()
	peak, alloc := w.done()
	t.Logf("4 resumes of the last 9 of %d events: peak heap +%.1f MiB, %.1f MiB allocated", last+1, peak, alloc)
	for i, evs := range got {
		if len(evs) == 0 || len(evs) > 9 || evs[len(evs)-1].Event != "response.completed" ||
			gjson.Get(evs[0].Data, "sequence_number").Int() <= last-9 {
			t.Errorf("resume %d: %d events", i, len(evs))
		}
	}
	// Reading every stored event and slicing held 189 MiB. Memory, not
	// time, is the measure: a loaded machine slows a resume, it does not
	// make it hold more.
	if peak > 40 {
		t.Errorf("4 resumes of the last 9 events cost %.1f MiB of heap; want under 40 MiB", peak)
	}
}

// TestStreamReadersPerTenantBounded: a tenant may follow at most
// limits.history.max_replays_per_tenant (4) streams at once, over either
// events endpoint; the next is 429 with Retry-After, another tenant is not
// affected, and a slot comes back when its reader leaves.
func TestStreamReadersPerTenantBounded(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond) })
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("slow ", 500)+`","background":true,"stream":true}`,
		"x-service-tenant-id", "t1")
	if res.StatusCode != 200 {
		t.Fatalf("background stream: %d", res.StatusCode)
	}
	res.Body.Close()
	id := res.Header.Get("x-service-run-id")
	resp := "resp_" + strings.TrimPrefix(id, "run_")
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	follow := func(tenant string, native bool) *http.Response {
		path := "/v1/responses/" + resp + "?stream=true"
		if native {
			path = "/runner/v1/runs/" + id + "/events"
		}
		return h.do("GET", path, "", "x-service-tenant-id", tenant)
	}
	for i := range 4 {
		r := follow("t1", i%2 == 1)
		open = append(open, r)
		if r.StatusCode != 200 {
			t.Fatalf("reader %d: %d %s", i, r.StatusCode, body(t, r))
		}
	}
	for _, native := range []bool{false, true} {
		r := follow("t1", native)
		if b := body(t, r); r.StatusCode != 429 || r.Header.Get("Retry-After") == "" ||
			gjson.GetBytes(b, "error.code").Str != "rate_limit_exceeded" {
			t.Errorf("a fifth reader (native %v): %d %s; want 429 rate_limit_exceeded", native, r.StatusCode, b)
		}
	}
	if r := follow("t2", false); r.StatusCode != 404 { // t2 cannot see it, and is not refused for t1's readers
		t.Errorf("another tenant: %d, want 404", r.StatusCode)
	}
	open[0].Body.Close()
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := follow("t1", false)
		if r.StatusCode == 200 {
			open = append(open, r)
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no slot after a reader left: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
