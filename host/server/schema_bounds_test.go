package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestSchemaBounds: a schema beyond the limits, or one no value can
// satisfy, is a 400 invalid_schema naming the field, over real HTTP, and no
// run is created (issue 13, item 5). Before, the first made the offline
// provider build a 20 MB document from 267 bytes, the second got a 502
// after a run was created and the third a 500.
func TestSchemaBounds(t *testing.T) {
	h := start(t, nil)
	deep := strings.Repeat(`{"items":`, 10_000) + `{}` + strings.Repeat(`}`, 10_000)
	schemas := []struct{ name, schema, want string }{
		{"20 MB document", `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":100,"items":{"type":"string","minLength":200000}}}}`, "smallest document"},
		{"unsatisfiable", `{"type":"object","required":["a"],"properties":{"a":false}}`, "admits no value"},
		{"nested 10,000 levels", deep, "nests deeper"},
	}
	for _, sc := range schemas {
		for _, ep := range []struct{ path, body, param string }{
			{"/v1/responses", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":` + sc.schema + `}}}`, "text.format.schema"},
			{"/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + sc.schema + `}}}`, "response_format.json_schema.schema"},
		} {
			t.Run(sc.name+ep.path, func(t *testing.T) {
				before := h.runCount()
				res := h.do("POST", ep.path, ep.body)
				b := wantError(t, res, 400, "invalid_request_error", "invalid_schema")
				if p := gjson.GetBytes(b, "error.param").Str; p != ep.param {
					t.Errorf("param %q, want %q", p, ep.param)
				}
				if msg := gjson.GetBytes(b, "error.message").Str; !strings.Contains(msg, sc.want) {
					t.Errorf("message %q, want it to say %q", msg, sc.want)
				}
				if after := h.runCount(); after != before {
					t.Errorf("a refused request created a run (%d → %d)", before, after)
				}
			})
		}
	}
}
