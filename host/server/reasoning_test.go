package server

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/host/config"
)

// A reasoning upstream's reasoning_content (vLLM, DeepSeek) becomes a
// reasoning output item — in the JSON reply, and streamed with its
// summary events — with encrypted_content only when include asks for it.
func TestUpstreamReasoningItem(t *testing.T) {
	reasoner := func(w http.ResponseWriter, r *http.Request) {
		if gjson.GetBytes(mustReadAll(r), "stream").Bool() {
			sseStart(w)
			sseSend(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Six "}}]}`+"\n\n",
				`data: {"choices":[{"index":0,"delta":{"reasoning_content":"times seven."}}]}`+"\n\n",
				contentChunk("42"), stopChunk)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"Six times seven."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`))
	}
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, reasoner)
		h := start(t, func(c *config.Config) { mapping(c); viaOpenAI(up.srv.URL, nil)(c) })
		client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
		params := responses.ResponseNewParams{Model: "service",
			Input:   responses.ResponseNewParamsInputUnion{OfString: openai.String("6*7?")},
			Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}
		r, err := client.Responses.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "42" || len(r.Output) != 2 || r.Output[1].Type != "reasoning" ||
			len(r.Output[1].Summary) != 1 || r.Output[1].Summary[0].Text != "Six times seven." {
			t.Fatalf("output %s", gjson.Get(r.RawJSON(), "output").Raw)
		}

		s := client.Responses.NewStreaming(context.Background(), params)
		var seen []string
		var delta, done string
		for s.Next() {
			ev := s.Current()
			seen = append(seen, ev.Type)
			switch ev.Type {
			case "response.reasoning_summary_text.delta":
				delta += ev.Delta
			case "response.reasoning_summary_text.done":
				done = ev.Text
			case "response.completed":
				if out := ev.Response.Output; len(out) != 2 || out[1].Summary[0].Text != "Six times seven." {
					t.Errorf("completed output %s", gjson.Get(ev.Response.RawJSON(), "output").Raw)
				}
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if delta != "Six times seven." || done != delta {
			t.Errorf("summary delta %q done %q; events %v", delta, done, seen)
		}
		// Raw HTTP: the reply and every event match the Open Responses shapes.
		resp, evSchema := openResponses(t, "ResponseResource"), openResponses(t, "StreamingEvent")
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"6*7?","include":["reasoning.encrypted_content"]}`)
		if b := body(t, res); resp.Validate(b) != nil || !strings.HasPrefix(gjson.GetBytes(b, "output.1.encrypted_content").Str, "rc1.") {
			t.Errorf("JSON reply with include: %v\n%s", resp.Validate(b), b)
		}
		res = h.do("POST", "/v1/responses", `{"model":"service","input":"6*7?"}`)
		if b := body(t, res); resp.Validate(b) != nil || gjson.GetBytes(b, "output.1.encrypted_content").Exists() {
			t.Errorf("JSON reply without include: %v\n%s", resp.Validate(b), b)
		}
		res = h.do("POST", "/v1/responses", `{"model":"service","input":"6*7?","stream":true}`)
		for _, e := range readEvents(t, res.Body) {
			if err := evSchema.Validate([]byte(e.Data)); err != nil {
				t.Errorf("event %s: %v\n%s", e.Event, err, e.Data)
			}
		}
		res.Body.Close()

		want := []string{"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
			"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done", "response.completed"}
		if len(seen) < len(want) || !slices.Equal(seen[len(seen)-len(want):], want) {
			t.Errorf("events %v", seen)
		}
	})
}

func mustReadAll(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// include reasoning.encrypted_content is honoured: a store:false turn's
// reasoning item carries the upstream's reasoning sealed for the tenant
// (JSON, stream and WebSocket alike, valid against the Open Responses
// description and OpenAI's), and the next turn that sends the item back
// gives the upstream that reasoning as reasoning_content of the answer's
// assistant message. An altered item, or another tenant's, is a 400 naming
// its encrypted_content.
func TestSealedReasoningRoundTrip(t *testing.T) {
	reasoner := func(w http.ResponseWriter, r *http.Request) {
		if gjson.GetBytes(mustReadAll(r), "stream").Bool() {
			sseStart(w)
			sseSend(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Six times seven."}}]}`+"\n\n",
				contentChunk("42"), stopChunk)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"Six times seven."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`))
	}
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, reasoner)
		h := start(t, func(c *config.Config) { mapping(c); compactKeys(t, "k1")(c); viaOpenAI(up.srv.URL, nil)(c) })
		orResp, oaResp := openResponses(t, "ResponseResource"), openAPIDef(t, "testdata/openapi/responses.json", "Response")
		const include = `,"include":["reasoning.encrypted_content"]`

		code, first := h.post("/v1/responses", `{"model":"service","store":false,"input":"6*7?"`+include+`}`)
		if code != 200 {
			t.Fatalf("turn 1: %d %s", code, first)
		}
		if err := orResp.Validate([]byte(first)); err != nil {
			t.Errorf("turn 1 against the Open Responses description: %v\n%s", err, first)
		}
		conforms(t, oaResp, "turn 1", first)
		item := gjson.Get(first, "output.1")
		if item.Get("type").Str != "reasoning" || item.Get("summary.0.text").Str != "Six times seven." {
			t.Fatalf("turn 1 output: %s", gjson.Get(first, "output").Raw)
		}
		wantSealed(t, item.Get("encrypted_content").Str, "k1", "Six times seven.")

		// Turn 2 sends turn 1's output back, as Codex does with store:false.
		next := func(reasoning, tenant string) *http.Response {
			return h.do("POST", "/v1/responses", `{"model":"service","store":false,"input":[{"role":"user","content":"6*7?"},`+
				gjson.Get(first, "output.0").Raw+`,`+reasoning+`,{"role":"user","content":"and 6*8?"}]`+include+`}`,
				"x-service-tenant-id", tenant)
		}
		before := len(up.requests())
		if res := next(item.Raw, "t1"); res.StatusCode != 200 {
			t.Fatalf("turn 2: %d %s", res.StatusCode, body(t, res))
		} else {
			res.Body.Close()
		}
		sent := up.requests()[before]
		msgs := gjson.Get(sent, "messages").Array()
		if len(msgs) != 3 || msgs[1].Get("role").Str != "assistant" || msgs[1].Get("reasoning_content").Str != "Six times seven." ||
			msgs[0].Get("reasoning_content").Exists() || msgs[2].Get("reasoning_content").Exists() {
			t.Errorf("turn 2 upstream messages: %s", gjson.Get(sent, "messages").Raw)
		}

		// Without include, nothing is sealed and nothing is sent back.
		code, plain := h.post("/v1/responses", `{"model":"service","store":false,"input":"6*7?"}`)
		if code != 200 || gjson.Get(plain, "output.1.encrypted_content").Exists() {
			t.Errorf("without include: %d %s", code, plain)
		}

		tampered := []byte(item.Get("encrypted_content").Str)
		tampered[len(tampered)-3] ^= 1
		if c := tampered[len(tampered)-3]; c == '-' || c == '_' || c < '0' {
			tampered[len(tampered)-3] = 'A'
		}
		forged, _ := sjson.Set(item.Raw, "encrypted_content", string(tampered))
		for _, c := range []struct{ name, item, tenant string }{
			{"tampered", forged, "t1"},
			{"another tenant's", item.Raw, "t2"},
			{"not sealed here", `{"type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque"}`, "t1"},
		} {
			res := next(c.item, c.tenant)
			e := body(t, res)
			if res.StatusCode != 400 || gjson.GetBytes(e, "error.type").Str != "invalid_request_error" ||
				gjson.GetBytes(e, "error.code").Str != "invalid_body" || gjson.GetBytes(e, "error.param").Str != "input[2].encrypted_content" ||
				gjson.GetBytes(e, "error.message").Str == "" {
				t.Errorf("%s: %d %s, want 400 invalid_body naming input[2].encrypted_content", c.name, res.StatusCode, e)
			}
		}

		// Streamed: output_item.done carries the same sealed content as
		// response.completed, and every event keeps its shape.
		evSchema := openResponses(t, "StreamingEvent")
		res := h.do("POST", "/v1/responses", `{"model":"service","store":false,"stream":true,"input":"6*7?"`+include+`}`, "x-service-tenant-id", "t1")
		var doneEnc, completedEnc string
		for _, e := range readEvents(t, res.Body) {
			if err := evSchema.Validate([]byte(e.Data)); err != nil {
				t.Errorf("event %s: %v\n%s", e.Event, err, e.Data)
			}
			switch ev := gjson.Parse(e.Data); ev.Get("type").Str {
			case "response.output_item.done":
				if ev.Get("item.type").Str == "reasoning" {
					doneEnc = ev.Get("item.encrypted_content").Str
				}
			case "response.output_item.added":
				if ev.Get("item.encrypted_content").Exists() {
					t.Errorf("output_item.added carries encrypted_content: %s", e.Data)
				}
			case "response.completed":
				completedEnc = ev.Get("response.output.1.encrypted_content").Str
				conforms(t, oaResp, "streamed final response", ev.Get("response").Raw)
			}
		}
		res.Body.Close()
		if doneEnc == "" || doneEnc != completedEnc {
			t.Errorf("stream: output_item.done %.30q, response.completed %.30q", doneEnc, completedEnc)
		}
		wantSealed(t, doneEnc, "k1", "Six times seven.")

		// The WebSocket transport: the same, and the socket's next
		// store:false turn (its cached items) opens it too.
		conn := sdkSocket(t, h)
		evs := socketTurn(t, conn, create(`,"store":false,"input":"6*7?"`+include))
		done := last(evs).Get("response")
		if last(evs).Get("type").Str != "response.completed" || !strings.HasPrefix(done.Get("output.1.encrypted_content").Str, "rc1.k1.") {
			t.Fatalf("socket turn 1: %s", last(evs).Raw)
		}
		before = len(up.requests())
		evs = socketTurn(t, conn, create(`,"store":false,"previous_response_id":"`+done.Get("id").Str+`","input":"and 6*8?"`+include))
		if last(evs).Get("type").Str != "response.completed" {
			t.Fatalf("socket turn 2: %s", last(evs).Raw)
		}
		sent = up.requests()[before]
		if got := gjson.Get(sent, `messages.#(role=="assistant").reasoning_content`).Str; got != "Six times seven." {
			t.Errorf("socket turn 2 upstream messages: %s", gjson.Get(sent, "messages").Raw)
		}
	})
}
