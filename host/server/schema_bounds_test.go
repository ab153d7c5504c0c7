package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestSchemaBounds: a schema beyond the limits, or one no value can
// satisfy, is a 400 invalid_schema naming the field, over real HTTP, and no
// run is created. Without the bounds, the first made the offline
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

// fanOutSchema is about 2 KB of $defs whose if/then/else each reach the
// next one twice: the validator would evaluate the last 2^26 times.
func fanOutSchema() string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 26 {
		next := `{"type":"string"}`
		if i < 25 {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"d` + strconv.Itoa(i) + `":{"if":` + next + `,"then":` + next + `,"else":` + next + `}`)
	}
	b.WriteString("}}")
	return b.String()
}

// TestSchemaFanOutRefusedFast: a 2 KB schema whose $refs multiply through
// if/then/else (which the bounds check did not walk) is a 400
// invalid_schema naming the field, through text.format, response_format
// and a tool's parameters, each answered within a second (before, the run
// pinned a core for seconds per level past the client's departure).
func TestSchemaFanOutRefusedFast(t *testing.T) {
	h := start(t, nil)
	sc := fanOutSchema()
	for _, ep := range []struct{ path, body, param string }{
		{"/v1/responses", `{"model":"service","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":` + sc + `}}}`, "text.format.schema"},
		{"/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + sc + `}}}`, "response_format.json_schema.schema"},
		{"/v1/responses", `{"model":"service","input":"x","tools":[{"type":"function","name":"f","parameters":` + sc + `}]}`, "tools[0].parameters"},
	} {
		t.Run(ep.param, func(t *testing.T) {
			before := h.runCount()
			begun := time.Now()
			res := h.do("POST", ep.path, ep.body)
			b := wantError(t, res, 400, "invalid_request_error", "invalid_schema")
			if el := time.Since(begun); el > time.Second {
				t.Errorf("answered after %s; the bound is 1s", el)
			}
			if p := gjson.GetBytes(b, "error.param").Str; p != ep.param {
				t.Errorf("param %q, want %q", p, ep.param)
			}
			if msg := gjson.GetBytes(b, "error.message").Str; !strings.Contains(msg, "subschemas") {
				t.Errorf("message %q, want it to name the subschema bound", msg)
			}
			if after := h.runCount(); after != before {
				t.Errorf("a refused request created a run (%d → %d)", before, after)
			}
		})
	}
}
