package server

import (
	"fmt"
	"net/http"
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

// TestClientItemIDsFollowTheIDRule: an item id a client chooses for a
// conversation item follows the rule of every id a client sends (1 to 128
// letters, digits, '-' or '_', as item references): a 200,000-character
// id, a path, markup or an id with '/' is 400 invalid_body naming the
// item's id, on the Conversations API and as the input of a response that
// continues a conversation, and nothing is stored; a well-formed id is
// kept and its item read back by path. Before, all were stored and listed,
// and the one with '/' could not be fetched.
func TestClientItemIDsFollowTheIDRule(t *testing.T) {
	h := start(t, nil)
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	conv := gjson.Get(created, "id").Str
	item := func(id string) string {
		return `{"type":"message","role":"user","content":"x","id":` + fmt.Sprintf("%q", id) + `}`
	}
	for name, id := range map[string]string{
		"200,000 characters": strings.Repeat("a", 200_000),
		"a path":             "../../etc/passwd",
		"markup":             "<script>",
		"a slash":            "msg_a/b",
		"a space":            "msg a",
	} {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct{ path, body, param string }{
				{"/v1/conversations", `{"items":[` + item(id) + `]}`, "items[0].id"},
				{"/v1/conversations/" + conv + "/items", `{"items":[{"role":"user","content":"ok"},` + item(id) + `]}`, "items[1].id"},
				{"/v1/responses", `{"model":"service","conversation":"` + conv + `","input":[` + item(id) + `]}`, "input[0].id"},
			} {
				res := h.do("POST", c.path, c.body, "x-service-tenant-id", "t1")
				apiError(t, res, http.StatusBadRequest, "invalid_body", c.param)
			}
		})
	}
	_, items := convDo(t, h, "GET", "/v1/conversations/"+conv+"/items", "")
	if n := len(gjson.Get(items, "data").Array()); n != 0 {
		t.Fatalf("refused items were stored: %d items: %.300s", n, items)
	}
	// A well-formed id is the client's, and reads back by path.
	const id = "msg_client-chosen_1"
	if st, b := convDo(t, h, "POST", "/v1/conversations/"+conv+"/items", `{"items":[`+item(id)+`]}`); st != 200 || gjson.Get(b, "data.0.id").Str != id {
		t.Fatalf("a well-formed id: %d %s", st, b)
	}
	if st, b := convDo(t, h, "GET", "/v1/conversations/"+conv+"/items/"+id, ""); st != 200 || gjson.Get(b, "id").Str != id {
		t.Fatalf("reading it back: %d %s", st, b)
	}
	// A malformed id in a reference is an unknown item too.
	res := h.do("POST", "/v1/responses", `{"model":"service","input":[{"type":"item_reference","id":"../../etc/passwd"}]}`, "x-service-tenant-id", "t1")
	if b := wantError(t, res, http.StatusBadRequest, "invalid_request_error", "item_not_found"); !strings.Contains(string(b), "passwd") {
		t.Fatalf("the refusal does not name the reference: %s", b)
	}
	// A malformed id on the path is an unknown item.
	apiError(t, h.do("GET", "/v1/conversations/"+conv+"/items/msg_%3Cscript%3E", "", "x-service-tenant-id", "t1"), http.StatusNotFound, "not_found", "")
}
