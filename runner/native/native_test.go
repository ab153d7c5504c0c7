package native

import (
	"encoding/json"
	"testing"
)

// The JSON form of these types is part of the plugin ABI; a changed tag is a
// break for every plugin, so the encoding is pinned here.
func TestWireForm(t *testing.T) {
	req := Request{
		Input:           []Message{{Role: "user", Content: "hi"}},
		Instructions:    "be brief",
		OutputSchema:    json.RawMessage(`{"type":"object"}`),
		SchemaName:      "s",
		JSONObject:      true,
		Stream:          true,
		MaxOutputTokens: 7,
	}
	res := Result{Text: "ok", FinishReason: "stop", Usage: Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}, Attempts: 2}
	for _, c := range []struct {
		v    any
		want string
	}{
		{req, `{"input":[{"role":"user","content":"hi"}],"instructions":"be brief","output_schema":{"type":"object"},"schema_name":"s","json_object":true,"stream":true,"max_output_tokens":7}`},
		{Request{}, `{"input":null,"stream":false}`},
		{res, `{"text":"ok","finish_reason":"stop","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3},"attempts":2}`},
		{Result{}, `{"text":"","finish_reason":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.v, b, c.want)
		}
	}
}
