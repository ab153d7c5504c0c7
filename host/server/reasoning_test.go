package server

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// A reasoning upstream's reasoning_content (vLLM, DeepSeek) becomes a
// reasoning output item — in the JSON reply, and streamed with its
// summary events — with include reasoning.encrypted_content accepted.
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
		if b := body(t, res); resp.Validate(b) != nil || gjson.GetBytes(b, "output.1.encrypted_content").Exists() {
			t.Errorf("JSON reply: %v\n%s", resp.Validate(b), b)
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
