package server

import (
	"testing"
)

// TestPrewarmShapes: both events of a socket pre-warm (generate:false) and
// the Response each carries are valid against the Open Responses
// description (every required key: completed_at, presence_penalty,
// frequency_penalty, top_logprobs, max_tool_calls, service_tier,
// safety_identifier, prompt_cache_key …) and against OpenAI's, with the
// request's settings echoed.
func TestPrewarmShapes(t *testing.T) {
	h := start(t, nil)
	conn := sdkSocket(t, h)
	orResp, orEvent := openResponses(t, "ResponseResource"), openResponses(t, "StreamingEvent")
	oaResp, oaEvent := stateSchema(t, "Response"), stateSchema(t, "ResponseStreamEvent")
	for _, settings := range []string{
		`,"generate":false,"store":false,"input":"warm"`,
		`,"generate":false,"store":false,"input":"warm","instructions":"Be brief.","temperature":0.5,"top_p":0.9,` +
			`"presence_penalty":0.1,"frequency_penalty":0.2,"top_logprobs":2,"max_tool_calls":3,"service_tier":"flex",` +
			`"safety_identifier":"s1","prompt_cache_key":"k1","user":"u1","max_output_tokens":64,"metadata":{"k":"v"}`,
	} {
		evs := socketTurn(t, conn, create(settings))
		if len(evs) != 2 {
			t.Fatalf("pre-warm %s: %v", settings, evs)
		}
		for _, ev := range evs {
			for _, s := range []struct {
				what   string
				schema interface{ Validate([]byte) error }
				doc    string
			}{
				{"Open Responses event", orEvent, ev.Raw}, {"OpenAI event", oaEvent, ev.Raw},
				{"Open Responses Response", orResp, ev.Get("response").Raw}, {"OpenAI Response", oaResp, ev.Get("response").Raw},
			} {
				if err := s.schema.Validate([]byte(s.doc)); err != nil {
					t.Errorf("pre-warm %s: %s (%s): %v\n%s", settings, s.what, ev.Get("type").Str, err, s.doc)
				}
			}
		}
		done := last(evs).Get("response")
		if done.Get("completed_at").Int() < done.Get("created_at").Int() || evs[0].Get("response.completed_at").Type.String() != "Null" {
			t.Errorf("completed_at: created %s, completed %s", evs[0].Get("response.completed_at").Raw, done.Get("completed_at").Raw)
		}
		if settings != `,"generate":false,"store":false,"input":"warm"` {
			for k, want := range map[string]string{"presence_penalty": "0.1", "frequency_penalty": "0.2", "top_logprobs": "2",
				"max_tool_calls": "3", "service_tier": `"flex"`, "safety_identifier": `"s1"`, "prompt_cache_key": `"k1"`, "metadata.k": `"v"`} {
				if got := done.Get(k).Raw; got != want {
					t.Errorf("%s echoed as %s, want %s", k, got, want)
				}
			}
		}
	}
}
