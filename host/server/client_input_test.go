package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// metadataOf is a metadata object of n pairs, each key of k and each value
// of v characters.
func metadataOf(n, k, v int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%q", fmt.Sprintf("%02d", i)+strings.Repeat("k", k-2), strings.Repeat("v", v))
	}
	return b.String() + "}"
}

// TestMetadataCheckedEverywhere: metadata is checked as OpenAI checks it
// (at most 16 keys, keys of at most 64 characters, string values of at
// most 512) by /v1/responses and /v1/chat/completions as by
// /v1/conversations, with one message: 400 invalid_body naming metadata,
// and no run. 16 keys are served, and the Response echoes them beside
// runedge's own metadata.service. Before, the first two accepted 17 keys
// and 5,000-character values.
func TestMetadataCheckedEverywhere(t *testing.T) {
	h := start(t, nil)
	shapes := map[string]func(meta string) string{
		"/v1/responses": func(m string) string { return `{"model":"service","input":"x","metadata":` + m + `}` },
		"/v1/chat/completions": func(m string) string {
			return `{"model":"service","messages":[{"role":"user","content":"x"}],"metadata":` + m + `}`
		},
		"/v1/conversations": func(m string) string { return `{"metadata":` + m + `}` },
	}
	for path, shape := range shapes {
		for name, meta := range map[string]string{
			"17 keys":                 metadataOf(17, 4, 4),
			"a 5,000-character value": metadataOf(1, 4, 5000),
			"a 65-character key":      metadataOf(1, 65, 1),
			"a number value":          `{"k":1}`,
			"an object value":         `{"k":{"a":"b"}}`,
			"an array, not an object": `["k"]`,
			"a string, not an object": `"k"`,
		} {
			t.Run(path+"/"+name, func(t *testing.T) {
				before := h.runCount()
				b := wantError(t, h.do("POST", path, shape(meta), "x-service-tenant-id", "t1"), 400, "invalid_request_error", "invalid_body")
				if p := gjson.GetBytes(b, "error.param").Str; p != "metadata" {
					t.Errorf("param %q, want metadata (%s)", p, gjson.GetBytes(b, "error.message").Str)
				}
				if after := h.runCount(); after != before {
					t.Errorf("a refused request created a run (%d → %d)", before, after)
				}
			})
		}
		res := h.do("POST", path, shape(metadataOf(16, 64, 512)), "x-service-tenant-id", "t1")
		b := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%s: 16 keys at the limits: status %d: %s", path, res.StatusCode, b)
		}
		if path == "/v1/responses" {
			meta := gjson.GetBytes(b, "metadata")
			if n := len(meta.Map()); n != 17 || !meta.Get("service.run_id").Exists() {
				t.Errorf("the Response's metadata has %d keys, want the client's 16 and service: %.200s", n, meta.Raw)
			}
		}
	}
}
