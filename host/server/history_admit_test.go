package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/contract"
)

// TestInputTokensAdmitted: POST /v1/responses/input_tokens replays the
// history it counts only inside an admission slot. 100 concurrent counts
// of a ~7 MB previous_response_id chain, with max_in_flight_per_token 4:
// at most 4 hold a slot (and so replay) at once, the others are refused
// with 429 rate_limit_exceeded and Retry-After, every count that was
// admitted is right, and the slots are all released afterwards.
func TestInputTokensAdmitted(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.MaxInFlightPerToken = 4 })
	prev := ""
	for range 4 {
		prev, _ = bigResponse(t, h, 900<<10, prev)
	}
	req := `{"model":"service","input":"and then","previous_response_id":"` + prev + `"}`
	res := h.do("POST", "/v1/responses/input_tokens", req)
	want := gjson.GetBytes(body(t, res), "input_tokens").Int()
	if res.StatusCode != 200 || want < 1<<18 {
		t.Fatalf("counting the chain alone: %d, %d tokens", res.StatusCode, want)
	}

	var peak atomic.Int64
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			if n := int64(h.srv.Runs().InFlight()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	const n = 100
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, n)
	began := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := http.NewRequest("POST", h.URL+"/v1/responses/input_tokens", strings.NewReader(req))
			if err != nil {
				errs <- err.Error()
				return
			}
			r.Header.Set("Authorization", "Bearer "+tokApp)
			r.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				errs <- err.Error()
				return
			}
			b := body(t, res)
			switch {
			case res.StatusCode == 200 && gjson.GetBytes(b, "input_tokens").Int() == want:
				ok.Add(1)
			case res.StatusCode == 429 && gjson.GetBytes(b, "error.code").Str == "rate_limit_exceeded" &&
				res.Header.Get("Retry-After") != "":
				refused.Add(1)
			default:
				errs <- fmt.Sprintf("%d %.200s", res.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("input_tokens: %s", e)
	}
	t.Logf("%d counts of a %d-token chain in %s: %d answered, %d refused, at most %d slots held at once",
		n, want, time.Since(began).Round(time.Millisecond), ok.Load(), refused.Load(), peak.Load())
	if peak.Load() > 4 || peak.Load() == 0 {
		t.Errorf("%d slots held at once; want 1 to 4 (max_in_flight_per_token)", peak.Load())
	}
	if refused.Load() == 0 || ok.Load() == 0 {
		t.Errorf("%d answered, %d refused; want both (4 slots for 100 replays of %d tokens)", ok.Load(), refused.Load(), want)
	}
	if n := h.srv.Runs().InFlight(); n != 0 {
		t.Errorf("%d slots still held after every count answered", n)
	}
}

// addItems adds n user messages of size bytes each to conversation id.
func addItems(t *testing.T, h *harness, id string, n, size int) {
	t.Helper()
	for i := range n {
		item := fmt.Sprintf(`{"items":[{"type":"message","role":"user","content":%q}]}`, fmt.Sprint(i)+strings.Repeat(" filler", size/7))
		if code, b := convDo(t, h, "POST", "/v1/conversations/"+id+"/items", item); code != 200 {
			t.Fatalf("adding item %d: %d %.300s", i, code, b)
		}
	}
}

// TestConversationHistoryBound: a conversation has one bound, the
// history's (limits.history.max_history_bytes), read where its items are
// read. Within it, a conversation larger than a mapping plugin's input
// (4 MiB) is continued and compacted (it used to fail every turn with 500
// plugin_error); past it, a turn is 400 naming conversation, and creates
// no run.
func TestConversationHistoryBound(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.History.MaxHistoryBytes = 6 << 20 })
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	id := gjson.Get(created, "id").Str
	addItems(t, h, id, 5, 900<<10) // about 4.4 MiB
	turn := `{"model":"service","input":"and now?","conversation":"` + id + `","max_output_tokens":16}`
	res := h.do("POST", "/v1/responses", turn, "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 {
		t.Fatalf("a turn of a 4.4 MiB conversation: %d %.300s", res.StatusCode, b)
	}
	res = h.do("POST", "/v1/responses/compact", `{"model":"service","conversation":"`+id+`"}`, "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 || gjson.GetBytes(b, "output.@reverse.0.type").Str != "compaction" {
		t.Fatalf("compacting a 4.4 MiB conversation: %d %.300s", res.StatusCode, b)
	}

	addItems(t, h, id, 2, 900<<10) // past 6 MiB
	apiError(t, h.do("POST", "/v1/responses", turn, "x-service-tenant-id", "t1"), 400, "invalid_body", "conversation")
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","conversation":"`+id+`","context_management":[{"type":"compaction","compact_threshold":1000}]}`,
		"x-service-tenant-id", "t1"), 400, "invalid_body", "conversation")
}

// TestConversationDeletedDuringTurn: a conversation deleted while a turn
// runs in it leaves the client the outcome that was recorded (the turn
// completed: 200 and its Response), never 500; the deleted conversation
// is not brought back by the turn's items.
func TestConversationDeletedDuringTurn(t *testing.T) {
	h := stateServer(t) // 2 ms a token
	_, created := convDo(t, h, "POST", "/v1/conversations", `{"items":[{"role":"user","content":"hello"}]}`)
	id := gjson.Get(created, "id").Str
	session, _ := contract.SessionIDOf(id)
	type reply struct {
		status int
		body   []byte
		run    string
	}
	done := make(chan reply, 1)
	go func() {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("word ", 600)+`","conversation":"`+id+`"}`,
			"x-service-tenant-id", "t1")
		done <- reply{res.StatusCode, body(t, res), res.Header.Get("x-service-run-id")}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		res := h.do("GET", "/runner/v1/runs?status=running&session_id="+session, "", "x-service-tenant-id", "t1")
		if gjson.GetBytes(body(t, res), "data.#").Int() > 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if code, b := convDo(t, h, "DELETE", "/v1/conversations/"+id, ""); code != 200 {
		t.Fatalf("delete: %d %s", code, b)
	}
	r := <-done
	if r.status != 200 || gjson.GetBytes(r.body, "status").Str != "completed" {
		t.Fatalf("the turn of a conversation deleted while it ran: %d %.300s; want the recorded outcome (200, completed)", r.status, r.body)
	}
	if run := h.run(r.run); run.Status != "completed" || run.SessionID != session {
		t.Errorf("the turn's run: %s in %s", run.Status, run.SessionID)
	}
	if code, b := convDo(t, h, "GET", "/v1/conversations/"+id+"/items", ""); code != 404 {
		t.Errorf("the deleted conversation's items after the turn: %d %.200s", code, b)
	}
}
