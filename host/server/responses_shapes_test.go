package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner/schema"
)

// stateSchema compiles definition name of testdata/openapi/responses.json,
// the Responses shapes of OpenAI's OpenAPI description that stored
// responses are read back in.
func stateSchema(t *testing.T, name string) *schema.Schema {
	return openAPIDef(t, "testdata/openapi/responses.json", name)
}

// Every Response object runedge sends or reads back (created, retrieved
// while running and after, cancelled, incomplete), every event of a
// resumed stream and the input item list match OpenAI's description, and
// carry the contract's output_text and metadata.service.
func TestResponsesStateShapes(t *testing.T) {
	h := stateServer(t)
	resp, ev, list := stateSchema(t, "Response"), stateSchema(t, "ResponseStreamEvent"), stateSchema(t, "ResponseItemList")
	check := func(what, doc string) {
		t.Helper()
		conforms(t, resp, what, doc)
		if !gjson.Get(doc, "output_text").Exists() || !gjson.Get(doc, "metadata.service.run_id").Exists() ||
			!gjson.Get(doc, "metadata.service.session_id").Exists() {
			t.Errorf("%s: output_text or metadata.service missing: %s", what, doc)
		}
	}
	post := func(b string) string { t.Helper(); return postT1(t, h, b) }
	get := func(id string) string { return getT1(t, h, id) }

	done := post(`{"model":"service","input":"shapes","metadata":{"k":"v"}}`)
	check("completed", done)
	check("retrieved", get(gjson.Get(done, "id").Str))
	check("incomplete", post(`{"model":"service","input":"one two three four","max_output_tokens":2}`))
	if inc := post(`{"model":"service","input":"one two three four","max_output_tokens":2}`); gjson.Get(inc, "output.0.status").Str != "incomplete" {
		t.Errorf("an incomplete response's message is %q", gjson.Get(inc, "output.0.status").Str)
	}

	bg := post(`{"model":"service","input":"` + strings.Repeat("w ", 3000) + `","background":true}`)
	check("background", bg)
	id := gjson.Get(bg, "id").Str
	check("in progress", get(id))
	cancelled := string(body(t, h.do("POST", "/v1/responses/"+id+"/cancel", "", "x-service-tenant-id", "t1")))
	check("cancelled", cancelled)
	if gjson.Get(cancelled, "status").Str != "cancelled" {
		t.Errorf("cancel: %s", cancelled)
	}

	st := post(`{"model":"service","input":"stream shapes","background":true,"stream":true}`)
	sid := ""
	for _, e := range readEvents(t, strings.NewReader(st)) {
		conforms(t, ev, e.Event, e.Data)
		if sid == "" {
			sid = gjson.Get(e.Data, "response.id").Str
		}
	}
	time.Sleep(50 * time.Millisecond)
	res := h.do("GET", "/v1/responses/"+sid+"?stream=true&starting_after=2", "", "x-service-tenant-id", "t1")
	evs := readEvents(t, res.Body)
	res.Body.Close()
	if len(evs) == 0 || gjson.Get(evs[0].Data, "sequence_number").Int() != 3 {
		t.Fatalf("resumed stream: %+v", evs)
	}
	for _, e := range evs {
		conforms(t, ev, e.Event, e.Data)
		if r := gjson.Get(e.Data, "response"); r.Exists() {
			check(e.Event, r.Raw)
		}
	}

	items := getT1(t, h, gjson.Get(done, "id").Str+"/input_items")
	conforms(t, list, "input_items", items)
}
