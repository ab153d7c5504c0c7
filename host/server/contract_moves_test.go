package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// A json_schema text format the client sent without a description, or with
// a null one, is echoed with a string description: valid against OpenAI's
// description (a string when present) and the Open Responses one (the key
// required) at once, whole and streamed.
func TestSchemaFormatDescriptionEcho(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		h := start(t, mapping)
		openAIResp, openResp := stateSchema(t, "Response"), openResponses(t, "ResponseResource")
		format := `"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}%s}}`
		for _, desc := range []string{"", `,"description":null`, `,"description":"the answer"`} {
			body := `{"model":"service","input":"x",` + fmt.Sprintf(format, desc) + `}`
			check := func(what string, r gjson.Result) {
				t.Helper()
				if d := r.Get("text.format.description"); d.Type != gjson.String {
					t.Errorf("%s %q: description %s", what, desc, d.Raw)
				}
				if err := openAIResp.Validate([]byte(r.Raw)); err != nil {
					t.Errorf("%s %q: OpenAI's description: %v", what, desc, err)
				}
				if err := openResp.Validate([]byte(r.Raw)); err != nil {
					t.Errorf("%s %q: the Open Responses description: %v", what, desc, err)
				}
			}
			res := h.do("POST", "/v1/responses", body)
			check("JSON", gjson.ParseBytes(bodyOK(t, res)))
			res = h.do("POST", "/v1/responses", body[:len(body)-1]+`,"stream":true}`)
			for _, e := range readEvents(t, res.Body) {
				if r := gjson.Get(e.Data, "response"); r.Exists() {
					check(e.Event, r)
				}
			}
			res.Body.Close()
		}
		if d := gjson.GetBytes(bodyOK(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x",`+fmt.Sprintf(format, `,"description":"the answer"`)+`}`)),
			"text.format.description").Str; d != "the answer" {
			t.Errorf("a description sent is echoed as %q", d)
		}
	})
}

// The newest SDK's settings runedge does not implement are refused by name,
// on both mappings, never accepted and ignored.
func TestNewestSettingsRefusedByName(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		h := start(t, mapping)
		for param, v := range map[string]string{
			"moderation":             `{"model":"omni-moderation-latest","policy":{"input":{"mode":"block"}}}`,
			"prompt_cache_retention": `"24h"`,
			"prompt_cache_options":   `{}`,
			"access_programs":        `{"cyber":"standard"}`,
		} {
			apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","`+param+`":`+v+`}`), 400, "unsupported_parameter", param)
		}
		bodyOK(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","moderation":null,"prompt_cache_retention":null}`))
	})
}

// bodyOK reads a 200 reply's body, failing the test on any other status.
func bodyOK(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	return b
}

// nsTools offer spawn_agent twice: at the top level and in the namespace
// multi_agent_v1, as a Codex user's MCP tool may be named.
const nsTools = `"tools":[{"type":"function","name":"spawn_agent","parameters":{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}},` +
	`{"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[{"type":"function","name":"spawn_agent",` +
	`"parameters":{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}}]}]`

// A namespaced function may share its name with a top-level one: the model
// is offered both (the namespaced one qualified), and a call of each comes
// back as OpenAI sends it, the namespace on the namespaced call only, whole
// and streamed.
func TestNamespacedNameEqualToTopLevel(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		h := start(t, mapping)
		for _, c := range []struct{ input, ns, arg string }{
			{"spawn_agent please", "", "who"},
			{"multi_agent_v1__spawn_agent please", "multi_agent_v1", "task"},
		} {
			check := func(what string, call gjson.Result) {
				t.Helper()
				if call.Get("type").Str != "function_call" || call.Get("name").Str != "spawn_agent" || call.Get("namespace").Str != c.ns ||
					(call.Get("status").Str == "completed" && !gjson.Get(call.Get("arguments").Str, c.arg).Exists()) {
					t.Errorf("%s %q: call %s", what, c.input, call.Raw)
				}
			}
			b := bodyOK(t, h.do("POST", "/v1/responses", `{"model":"service","input":"`+c.input+`",`+nsTools+`}`))
			check("JSON", gjson.GetBytes(b, "output.0"))
			res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+c.input+`","stream":true,`+nsTools+`}`)
			for _, e := range readEvents(t, res.Body) {
				switch e.Event {
				case "response.output_item.added", "response.output_item.done":
					check(e.Event, gjson.Get(e.Data, "item"))
				case "response.completed":
					check(e.Event, gjson.Get(e.Data, "response.output.0"))
				}
			}
			res.Body.Close()
		}
	})
}
