package server

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// detailedUsage is an upstream's usage with every detail it may report:
// 7 of the 30 input tokens from its prompt cache, 2 written to it, 18 of
// the 25 output tokens spent reasoning.
const detailedUsage = `{"prompt_tokens":30,"completion_tokens":25,"total_tokens":55,` +
	`"prompt_tokens_details":{"cached_tokens":7,"cache_write_tokens":2},"completion_tokens_details":{"reasoning_tokens":18}}`

// detailedUpstream answers every call, whole or streamed, with usage
// detailedUsage.
func detailedUpstream(w http.ResponseWriter, r *http.Request) {
	if gjson.GetBytes(mustReadAll(r), "stream").Bool() {
		sseStart(w)
		sseSend(w, contentChunk("forty-two"),
			`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
			`data: {"object":"chat.completion.chunk","choices":[],"usage":`+detailedUsage+`}`+"\n\n", "data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"forty-two"},"finish_reason":"stop"}],"usage":` + detailedUsage + `}`))
}

// Reasoning, cached and cache-write tokens are what the upstream reported,
// on both endpoints, whole and streamed, and on compaction's reply; every
// Response stays valid against both descriptions.
func TestUsageDetailsFromUpstream(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, detailedUpstream)
		h := start(t, func(c *config.Config) {
			mapping(c)
			viaOpenAI(up.srv.URL, func(o *config.OpenAI) { o.IncludeUsage = true })(c)
		})
		openAIResp, openResp := stateSchema(t, "Response"), openResponses(t, "ResponseResource")
		checkResponse := func(what string, r gjson.Result) {
			t.Helper()
			u := r.Get("usage")
			if u.Get("input_tokens").Int() != 30 || u.Get("input_tokens_details.cached_tokens").Int() != 7 ||
				u.Get("input_tokens_details.cache_write_tokens").Int() != 2 ||
				u.Get("output_tokens").Int() != 25 || u.Get("output_tokens_details.reasoning_tokens").Int() != 18 || u.Get("total_tokens").Int() != 55 {
				t.Errorf("%s: usage %s", what, u.Raw)
			}
			if err := openAIResp.Validate([]byte(r.Raw)); err != nil {
				t.Errorf("%s: OpenAI's description: %v", what, err)
			}
			if err := openResp.Validate([]byte(r.Raw)); err != nil {
				t.Errorf("%s: the Open Responses description: %v", what, err)
			}
		}
		checkChat := func(what string, u gjson.Result) {
			t.Helper()
			if u.Get("prompt_tokens").Int() != 30 || u.Get("prompt_tokens_details.cached_tokens").Int() != 7 ||
				u.Get("completion_tokens").Int() != 25 || u.Get("completion_tokens_details.reasoning_tokens").Int() != 18 {
				t.Errorf("%s: usage %s", what, u.Raw)
			}
		}

		res := h.do("POST", "/v1/responses", `{"model":"service","input":"6*7?"}`)
		checkResponse("responses JSON", gjson.ParseBytes(body(t, res)))

		res = h.do("POST", "/v1/responses", `{"model":"service","input":"6*7?","stream":true}`)
		var completed gjson.Result
		for _, e := range readEvents(t, res.Body) {
			if e.Event == "response.completed" {
				completed = gjson.Get(e.Data, "response")
			}
		}
		res.Body.Close()
		checkResponse("responses stream", completed)

		res = h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"6*7?"}]}`)
		checkChat("chat JSON", gjson.GetBytes(body(t, res), "usage"))

		res = h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"6*7?"}],"stream":true,"stream_options":{"include_usage":true}}`)
		var usage gjson.Result
		for _, e := range readEvents(t, res.Body) {
			if u := gjson.Get(e.Data, "usage"); u.IsObject() {
				usage = u
			}
		}
		res.Body.Close()
		checkChat("chat stream", usage)

		res = h.do("POST", "/v1/responses/compact", `{"model":"service","input":"a long conversation"}`)
		b := body(t, res)
		if u := gjson.GetBytes(b, "usage"); res.StatusCode != 200 || u.Get("input_tokens_details.cached_tokens").Int() != 7 ||
			u.Get("input_tokens_details.cache_write_tokens").Int() != 2 || u.Get("output_tokens_details.reasoning_tokens").Int() != 18 {
			t.Errorf("compact: %d %s", res.StatusCode, b)
		}

		// The ledger keeps the same split: five runs, each 7 cached and
		// 18 reasoning tokens.
		var cached, reasoning int64
		for _, r := range h.usage(tokAdmin, "group_by=tenant").Data {
			cached += r.CachedTokens
			reasoning += r.ReasoningTokens
		}
		if cached != 5*7 || reasoning != 5*18 {
			t.Errorf("ledger: %d cached and %d reasoning tokens, want %d and %d", cached, reasoning, 5*7, 5*18)
		}
	})
}

// A pre-warm's Response (generate:false) has every usage key openai-node
// types as required, cache_write_tokens included.
func TestPrewarmUsageKeys(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	resp := last(socketTurn(t, conn, create(`,"generate":false,"store":false,"input":"warm"`))).Get("response")
	for _, k := range []string{"input_tokens", "input_tokens_details.cached_tokens", "input_tokens_details.cache_write_tokens",
		"output_tokens", "output_tokens_details.reasoning_tokens", "total_tokens"} {
		if !resp.Get("usage." + k).Exists() {
			t.Errorf("pre-warm usage without %s: %s", k, resp.Get("usage").Raw)
		}
	}
}
