package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// Edge A runs the openai provider against edge B, a second runedge on the
// offline provider: B's /v1/chat/completions is itself OpenAI-compatible,
// so this is the provider against a real upstream process's HTTP and SSE.
func TestOpenAIProviderAgainstRunedge(t *testing.T) {
	b := start(t, nil)
	t.Setenv("RUNEDGE_TEST_UPSTREAM_KEY", tokApp)
	a := start(t, viaOpenAI(b.URL+"/v1", func(o *config.OpenAI) {
		o.Model, o.APIKeyEnv, o.IncludeUsage = "service", "RUNEDGE_TEST_UPSTREAM_KEY", true
	}))

	t.Run("whole", func(t *testing.T) {
		res := a.do("POST", "/v1/chat/completions", chatBody)
		bb := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, bb)
		}
		if got := gjson.GetBytes(bb, "choices.0.message.content").Str; got != "You said: Hello there runedge" {
			t.Fatalf("content %q", got)
		}
		// Usage is B's: 2 + 3 input words, 5 output words.
		if u := gjson.GetBytes(bb, "usage"); u.Get("prompt_tokens").Int() != 5 || u.Get("completion_tokens").Int() != 5 {
			t.Fatalf("usage %s", u.Raw)
		}
		r := a.run(checkRunHeaders(t, res.Header))
		if r.Status != runner.StatusCompleted || r.Attempts != 1 || r.Usage == nil || r.Usage.TotalTokens != 10 {
			t.Fatalf("edge run %+v", r)
		}
		if b.runCount() != 1 {
			t.Fatalf("upstream recorded %d runs, want 1", b.runCount())
		}
	})

	t.Run("stream", func(t *testing.T) {
		res := a.do("POST", "/v1/chat/completions",
			`{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"one two three four"}]}`)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		id := checkRunHeaders(t, res.Header)
		evs := readEvents(t, res.Body)
		res.Body.Close()
		var text strings.Builder
		deltas, usage := 0, ""
		for _, ev := range evs[:len(evs)-1] {
			if c := gjson.Get(ev.Data, "choices.0.delta.content"); c.Str != "" {
				deltas++
				text.WriteString(c.Str)
			}
			if u := gjson.Get(ev.Data, "usage"); u.IsObject() {
				usage = u.Raw
			}
		}
		if text.String() != "You said: one two three four" || evs[len(evs)-1].Data != "[DONE]" {
			t.Fatalf("text %q, events %v", text.String(), evs)
		}
		if deltas != 6 {
			t.Fatalf("%d content chunks, want B's 6 words passed on one by one", deltas)
		}
		if gjson.Get(usage, "prompt_tokens").Int() != 4 || gjson.Get(usage, "completion_tokens").Int() != 6 {
			t.Fatalf("usage chunk %s, want B's counts", usage)
		}
		if r := a.run(id); r.Status != runner.StatusCompleted || r.Usage == nil || r.Usage.OutputTokens != 6 {
			t.Fatalf("edge run %+v", r)
		}
	})

	t.Run("structured output", func(t *testing.T) {
		schema := `{"type":"object","additionalProperties":false,"required":["name","born"],
			"properties":{"name":{"type":"string"},"born":{"type":"integer","minimum":1800}}}`
		for _, stream := range []string{"false", "true"} {
			res := a.do("POST", "/v1/responses", `{"model":"service","input":"Ada Lovelace","stream":`+stream+`,
				"text":{"format":{"type":"json_schema","name":"person","strict":true,"schema":`+schema+`}}}`)
			if res.StatusCode != 200 {
				t.Fatalf("stream %s: %d %s", stream, res.StatusCode, body(t, res))
			}
			var out string
			if stream == "false" {
				out = gjson.GetBytes(body(t, res), "output.0.content.0.text").Str
			} else {
				for _, ev := range readEvents(t, res.Body) {
					if ev.Event == "response.output_text.done" {
						out = gjson.Get(ev.Data, "text").Str
					}
				}
				res.Body.Close()
			}
			var doc struct {
				Name string `json:"name"`
				Born int    `json:"born"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Name == "" || doc.Born < 1800 {
				t.Fatalf("stream %s: document %q (%v)", stream, out, err)
			}
		}
	})

	t.Run("upstream breaks mid-stream", func(t *testing.T) {
		// B streams three words, then fails: A has passed them on, so it
		// ends its stream with an error event and records the failure.
		res := a.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"/fail-mid now"}]}`)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		id := checkRunHeaders(t, res.Header)
		evs := readEvents(t, res.Body)
		res.Body.Close()
		last := evs[len(evs)-1]
		if gjson.Get(last.Data, "error.code").Str != "provider_error" ||
			!strings.Contains(gjson.Get(last.Data, "error.message").Str, "reported an error mid-stream") {
			t.Fatalf("last event %s", last.Data)
		}
		if gjson.Get(evs[1].Data, "choices.0.delta.content").Str != "You" {
			t.Fatalf("the deltas before the failure were not passed on: %v", evs)
		}
		if r := a.run(id); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonProviderError {
			t.Fatalf("edge run %+v", r)
		}
	})
}

const nameSchema = `{"type":"object","additionalProperties":false,"required":["name"],"properties":{"name":{"type":"string"}}}`

// hold keeps a request open until the edge cancels it, and reports that.
func hold(gone chan<- struct{}) func(r *http.Request) {
	return func(r *http.Request) {
		select {
		case <-r.Context().Done():
			if gone != nil {
				gone <- struct{}{}
			}
		case <-time.After(20 * time.Second):
		}
	}
}

// One edge in front of one scripted upstream, each case chosen by the
// client's message: failures as the edge's clients see them and as the run
// records them, the structured-output repair, and a client going away.
func TestOpenAIProviderAtTheEdge(t *testing.T) {
	up := newScripted(t, byMessage(map[string]http.HandlerFunc{
		"429": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "17")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
		},
		"slow": func(w http.ResponseWriter, r *http.Request) { hold(nil)(r) },
		"stall": func(w http.ResponseWriter, r *http.Request) {
			sseStart(w)
			sseSend(w, contentChunk("Hello"))
			hold(nil)(r)
		},
		"drop": func(w http.ResponseWriter, r *http.Request) {
			sseStart(w)
			sseSend(w, contentChunk("Hel"))
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		},
		"broken": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":`)
		},
		"repair-fails": wholeOf(`{"name":42}`),
		"repair-works": func(w http.ResponseWriter, r *http.Request) {
			if isRepair(r) {
				streamOf(`{"name":`, `"Ada"}`)(w, r)
				return
			}
			streamOf(`{"name":`, `42}`)(w, r)
		},
	}))
	h := start(t, viaOpenAI(up.srv.URL+"/v1", func(o *config.OpenAI) {
		o.FirstByteTimeout, o.IdleTimeout = config.Dur(500*time.Millisecond), config.Dur(500*time.Millisecond)
	}))
	chat := func(msg string, stream bool) string {
		return `{"model":"service","stream":` + map[bool]string{false: "false", true: "true"}[stream] +
			`,"messages":[{"role":"user","content":"` + msg + `"}]}`
	}
	// lastEvent reads a stream to its end and returns the run id, the
	// events and the last one.
	lastEvent := func(t *testing.T, res *http.Response) (string, []sseEvent, sseEvent) {
		t.Helper()
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		id := checkRunHeaders(t, res.Header)
		evs := readEvents(t, res.Body)
		res.Body.Close()
		return id, evs, evs[len(evs)-1]
	}
	wantRun := func(t *testing.T, id string, status runner.Status, reason string) runner.Run {
		t.Helper()
		r := h.run(id)
		if r.Status != status || r.StatusReason != reason {
			t.Fatalf("run %s/%s, want %s/%s: %+v", r.Status, r.StatusReason, status, reason, r)
		}
		return r
	}

	t.Run("429 keeps the upstream's Retry-After", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", chat("429", false))
		b := wantError(t, res, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
		if res.Header.Get("Retry-After") != "17" {
			t.Fatalf("Retry-After %q, want the upstream's 17", res.Header.Get("Retry-After"))
		}
		if m := gjson.GetBytes(b, "error.message").Str; !strings.Contains(m, "answered 429") || strings.Contains(m, "Rate limit reached") {
			t.Fatalf("message does not say what the upstream did in our words: %s", b)
		}
		wantRun(t, checkRunHeaders(t, res.Header), runner.StatusFailed, runner.ReasonRateLimited)
		if n := len(up.requestsFor("429")); n != 1 {
			t.Fatalf("%d upstream requests; a Retry-After beyond backoff_max is not waited for", n)
		}
	})

	t.Run("slow first byte is 504", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", chat("slow", true))
		wantError(t, res, http.StatusGatewayTimeout, "api_error", "timeout")
		wantRun(t, checkRunHeaders(t, res.Header), runner.StatusFailed, runner.ReasonTimeout)
	})

	t.Run("stall mid-stream ends with a timeout event", func(t *testing.T) {
		id, evs, last := lastEvent(t, h.do("POST", "/v1/chat/completions", chat("stall", true)))
		if gjson.Get(evs[1].Data, "choices.0.delta.content").Str != "Hello" || gjson.Get(last.Data, "error.code").Str != "timeout" {
			t.Fatalf("events %v", evs)
		}
		wantRun(t, id, runner.StatusFailed, runner.ReasonTimeout)
	})

	t.Run("dropped connection mid-stream ends with an error event", func(t *testing.T) {
		id, evs, last := lastEvent(t, h.do("POST", "/v1/chat/completions", chat("drop", true)))
		if gjson.Get(last.Data, "error.code").Str != "provider_error" {
			t.Fatalf("events %v", evs)
		}
		wantRun(t, id, runner.StatusFailed, runner.ReasonProviderError)
		if n := len(up.requestsFor("drop")); n != 1 {
			t.Fatalf("%d upstream requests: a stream is not retried after a delta went out", n)
		}
	})

	t.Run("broken JSON is 502", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", chat("broken", false))
		b := wantError(t, res, http.StatusBadGateway, "api_error", "provider_error")
		if !strings.Contains(string(b), "not JSON") {
			t.Fatalf("message %s", b)
		}
		wantRun(t, checkRunHeaders(t, res.Header), runner.StatusFailed, runner.ReasonProviderError)
	})

	withSchema := func(msg string, stream bool) string {
		return strings.Replace(chat(msg, stream), `"messages"`,
			`"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":`+nameSchema+`}},"messages"`, 1)
	}

	t.Run("non-conforming output: repair, then a clear error", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", withSchema("repair-fails", false))
		b := wantError(t, res, http.StatusInternalServerError, "server_error", "run_failed")
		if strings.Contains(string(b), `"name":42`) || !strings.Contains(string(b), "after a repair attempt") {
			t.Fatalf("error %s", b)
		}
		r := wantRun(t, checkRunHeaders(t, res.Header), runner.StatusFailed, runner.ReasonOutputInvalid)
		if r.Attempts != 2 {
			t.Fatalf("attempts %d, want 2", r.Attempts)
		}
		reqs := up.requestsFor("repair-fails")
		if len(reqs) != 2 {
			t.Fatalf("%d upstream requests, want 2", len(reqs))
		}
		msgs := gjson.Get(reqs[1], "messages").Array()
		if len(msgs) != 3 || msgs[1].Get("role").Str != "assistant" || msgs[1].Get("content").Str != `{"name":42}` ||
			!strings.Contains(msgs[2].Get("content").Str, "at '/name'") {
			t.Fatalf("repair request %s", reqs[1])
		}
		if gjson.Get(reqs[1], "response_format.json_schema.name").Str != "person" {
			t.Fatalf("repair request lost the response_format: %s", reqs[1])
		}
	})

	t.Run("non-conforming output: repair works, streamed", func(t *testing.T) {
		id, evs, _ := lastEvent(t, h.do("POST", "/v1/chat/completions", withSchema("repair-works", true)))
		var text strings.Builder
		for _, ev := range evs {
			text.WriteString(gjson.Get(ev.Data, "choices.0.delta.content").Str)
		}
		if text.String() != `{"name":"Ada"}` {
			t.Fatalf("client got %q; only the repaired document may go out", text.String())
		}
		if r := wantRun(t, id, runner.StatusCompleted, ""); r.Attempts != 2 {
			t.Fatalf("attempts %d, want 2", r.Attempts)
		}
	})
}

// A client that goes away mid-stream cancels the upstream request at once:
// the upstream sees its request end long before any of the provider's own
// limits could have ended it, and the run records
// cancelled/client_disconnect.
func TestOpenAIProviderDisconnectReachesUpstream(t *testing.T) {
	upstreamGone := make(chan struct{}, 1)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		sseStart(w)
		sseSend(w, contentChunk("first"))
		hold(upstreamGone)(r)
	})
	h := start(t, viaOpenAI(up.srv.URL+"/v1", func(o *config.OpenAI) {
		o.FirstByteTimeout, o.IdleTimeout = config.Dur(time.Minute), config.Dur(time.Minute)
	}))
	res := h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	id := checkRunHeaders(t, res.Header)
	rd := bufio.NewReader(res.Body)
	for { // read up to the first content chunk, then hang up
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"first"`) {
			break
		}
	}
	res.Body.Close()
	select {
	case <-upstreamGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
		t.Fatalf("run %+v", r)
	}
}

func TestOpenAIProviderConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	h := start(t, viaOpenAI("http://"+addr+"/v1", nil))
	res := h.do("POST", "/v1/chat/completions", chatBody)
	b := wantError(t, res, http.StatusBadGateway, "api_error", "provider_error")
	if !strings.Contains(string(b), "refused the connection (after 3 attempts)") || strings.Contains(string(b), addr) {
		t.Fatalf("message %s", b)
	}
	if r := h.run(checkRunHeaders(t, res.Header)); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonProviderError {
		t.Fatalf("run %+v", r)
	}
}

// A key variable that is not set fails the start, naming the field.
func TestOpenAIProviderNeedsItsKey(t *testing.T) {
	cfg := config.Default()
	viaOpenAI("http://127.0.0.1:1/v1", func(o *config.OpenAI) { o.APIKeyEnv = "RUNEDGE_TEST_UNSET_KEY_VAR" })(cfg)
	if _, _, err := newAgent(cfg, nil); err == nil || !strings.Contains(err.Error(), "provider.openai.api_key_env") {
		t.Fatalf("err = %v", err)
	}
}
