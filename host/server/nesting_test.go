package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// nested is v inside n arrays.
func nested(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// nestedSchema is a JSON Schema of n levels of object properties (2n JSON
// levels).
func nestedSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

// TestBodyNestingBounded: a client field nested past the limit is a 400
// naming the field, over real HTTP, and creates no run. Before, 450,000
// levels of metadata were accepted and echoed, and deep tool parameters
// were a 500 plugin_error.
func TestBodyNestingBounded(t *testing.T) {
	h := start(t, nil)
	for _, tc := range []struct{ name, path, body, code, param string }{
		{"450,000 levels of metadata", "/v1/responses",
			`{"model":"service","input":"x","metadata":{"k":` + nested(450_000, "1") + `}}`, "invalid_body", "metadata"},
		{"deep input", "/v1/responses",
			`{"model":"service","input":[{"role":"user","content":` + nested(200, `"x"`) + `}]}`, "invalid_body", "input[0].content"},
		{"deep chat message", "/v1/chat/completions",
			`{"model":"service","messages":[{"role":"user","content":"x","extra":` + nested(200, "1") + `}]}`, "invalid_body", "messages[0].extra"},
		{"deep tool parameters (responses)", "/v1/responses",
			`{"model":"service","input":"x","tools":[{"type":"function","name":"f","parameters":` + nestedSchema(100) + `}]}`, "invalid_schema", "tools[0].parameters"},
		{"deep tool parameters (chat)", "/v1/chat/completions",
			`{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + nestedSchema(5000) + `}}]}`, "invalid_schema", "tools[0].function.parameters"},
		{"tool parameters deeper than a schema may be", "/v1/responses",
			`{"model":"service","input":"x","tools":[{"type":"function","name":"f","parameters":` + nestedSchema(40) + `}]}`, "invalid_schema", "tools[0].parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.runCount()
			b := wantError(t, h.do("POST", tc.path, tc.body), 400, "invalid_request_error", tc.code)
			if p := gjson.GetBytes(b, "error.param").Str; p != tc.param {
				t.Errorf("param %q, want %q (%s)", p, tc.param, gjson.GetBytes(b, "error.message").Str)
			}
			if after := h.runCount(); after != before {
				t.Errorf("a refused request created a run (%d → %d)", before, after)
			}
		})
	}
	// What nests within the limits still works.
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","metadata":{"k":"v"},"text":{"format":{"type":"json_schema","name":"x","schema":`+nestedSchema(20)+`}}}`)
	if res.StatusCode != 200 {
		t.Fatalf("a 40-level schema: status %d", res.StatusCode)
	}
}
