package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner/schema"
)

// openResponses compiles definition name of testdata/openresponses/responses.json,
// the Open Responses specification's shapes.
func openResponses(t *testing.T, name string) *schema.Schema {
	return openAPIDef(t, "testdata/openresponses/responses.json", name)
}

// Every Response object runedge sends (JSON replies, the response of every
// stream event, what GET /v1/responses/{id} returns while running, after
// completion and after a cancel) and every stream event is what the Open
// Responses specification describes: every required key, of its type.
func TestOpenResponsesShapes(t *testing.T) {
	h := stateServer(t)
	resp, ev := openResponses(t, "ResponseResource"), openResponses(t, "StreamingEvent")
	check := func(what, doc string) {
		t.Helper()
		if err := resp.Validate([]byte(doc)); err != nil {
			t.Fatalf("%s does not match the Open Responses description: %v\n%s", what, err, doc)
		}
		if !gjson.Get(doc, "metadata.service.run_id").Exists() {
			t.Errorf("%s: metadata.service missing: %s", what, doc)
		}
	}
	events := func(what, stream string) []sseEvent {
		t.Helper()
		evs := readEvents(t, strings.NewReader(stream))
		for _, e := range evs {
			if err := ev.Validate([]byte(e.Data)); err != nil {
				t.Fatalf("%s: event %s does not match the Open Responses description: %v\n%s", what, e.Event, err, e.Data)
			}
			if r := gjson.Get(e.Data, "response"); r.Exists() {
				check(what+" "+e.Event, r.Raw)
			}
		}
		return evs
	}
	post := func(b string) string { t.Helper(); return postT1(t, h, b) }
	get := func(id string) string { return getT1(t, h, id) }

	done := post(`{"model":"service","input":"shapes","metadata":{"k":"v"}}`)
	check("completed", done)
	if gjson.Get(done, "completed_at").Int() < gjson.Get(done, "created_at").Int() {
		t.Errorf("completed_at before created_at: %s", done)
	}
	check("retrieved", get(gjson.Get(done, "id").Str))
	check("incomplete", post(`{"model":"service","input":"one two three four","max_output_tokens":2}`))
	check("every setting", post(`{"model":"service","input":"settings","instructions":"be brief",`+
		`"temperature":0.5,"top_p":0.9,"presence_penalty":0.1,"frequency_penalty":0.2,"top_logprobs":0,`+
		`"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","safety_identifier":"s1",`+
		`"prompt_cache_key":"k1","user":"u1","max_tool_calls":3,"truncation":"disabled","parallel_tool_calls":false,`+
		`"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}}}`))
	tools := post(toolResponsesBody + `}`)
	check("tool call", tools)
	check("tool call, default strict", post(`{"model":"service","input":"get_weather Paris",`+
		`"tools":[{"type":"function","name":"get_weather"}]}`))

	bg := post(`{"model":"service","input":"` + strings.Repeat("w ", 3000) + `","background":true}`)
	check("background", bg)
	id := gjson.Get(bg, "id").Str
	check("in progress", get(id))
	cancelled := string(body(t, h.do("POST", "/v1/responses/"+id+"/cancel", "", "x-service-tenant-id", "t1")))
	check("cancelled", cancelled)
	check("cancelled, retrieved", get(id))

	events("text stream", post(`{"model":"service","input":"stream shapes","stream":true}`))
	events("tool stream", post(strings.Replace(toolResponsesBody, `"input"`, `"stream":true,"input"`, 1)+`}`))
	failed := events("failed stream", post(`{"model":"service","input":"/fail-mid now","stream":true}`))
	if len(failed) == 0 {
		t.Fatal("failed stream: no events")
	}

	st := post(`{"model":"service","input":"stream shapes","background":true,"stream":true}`)
	sid := gjson.Get(readEvents(t, strings.NewReader(st))[0].Data, "response.id").Str
	time.Sleep(50 * time.Millisecond)
	res := h.do("GET", "/v1/responses/"+sid+"?stream=true&starting_after=0", "", "x-service-tenant-id", "t1")
	events("resumed stream", string(body(t, res)))
}
