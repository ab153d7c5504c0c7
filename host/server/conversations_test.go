package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/sdkcheck"
)

// convDo sends a Conversations request as tenant t1 (or the tenant given)
// and returns status and body.
func convDo(t *testing.T, h *harness, method, path, b string, tenant ...string) (int, string) {
	t.Helper()
	tn := "t1"
	if len(tenant) > 0 {
		tn = tenant[0]
	}
	res := h.do(method, path, b, "x-service-tenant-id", tn)
	return res.StatusCode, string(body(t, res))
}

// Every Conversations endpoint answers in the shape of OpenAI's OpenAPI
// description (testdata/openapi/conversations.json) and decodes with
// openai-go's conversations types: create with items and metadata, read,
// update, add items, list both ways with paging, read and delete an item
// (answering the Conversation), delete the conversation.
func TestConversationShapes(t *testing.T) {
	h := start(t, nil)
	def := func(name string) func(string, string) {
		s := openAPIDef(t, "testdata/openapi/conversations.json", name)
		return func(what, doc string) { t.Helper(); conforms(t, s, what, doc) }
	}
	conv, del, list, item := def("Conversation"), def("DeletedConversation"), def("ConversationItemList"), def("ConversationItem")
	ok := func(status int, b string) string {
		t.Helper()
		if status != 200 {
			t.Fatalf("%d %s", status, b)
		}
		return b
	}

	created := ok(convDo(t, h, "POST", "/v1/conversations",
		`{"metadata":{"topic":"demo"},"items":[{"role":"user","content":"hello"},{"type":"message","role":"assistant","content":"hi there"}]}`))
	conv("created", created)
	sdkcheck.Keys(t, "created", sdkcheck.Decode[conversations.Conversation](t, []byte(created)))
	id := gjson.Get(created, "id").Str
	if !strings.HasPrefix(id, "conv_") || gjson.Get(created, "metadata.topic").Str != "demo" {
		t.Fatalf("created: %s", created)
	}
	conv("retrieved", ok(convDo(t, h, "GET", "/v1/conversations/"+id, "")))
	upd := ok(convDo(t, h, "POST", "/v1/conversations/"+id, `{"metadata":{"topic":"other"}}`))
	conv("updated", upd)
	if gjson.Get(upd, "metadata.topic").Str != "other" {
		t.Errorf("update: %s", upd)
	}

	added := ok(convDo(t, h, "POST", "/v1/conversations/"+id+"/items", `{"items":[`+
		`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},`+
		`{"type":"function_call_output","call_id":"call_1","output":"sunny"}]}`))
	list("added", added)
	sdkcheck.Keys(t, "added", sdkcheck.Decode[conversations.ConversationItemList](t, []byte(added)))
	if n := gjson.Get(added, "data.#").Int(); n != 2 {
		t.Fatalf("added %d items: %s", n, added)
	}

	desc := ok(convDo(t, h, "GET", "/v1/conversations/"+id+"/items", ""))
	list("listed", desc)
	types := func(doc string) string {
		var out []string
		for _, v := range gjson.Get(doc, "data.#.type").Array() {
			out = append(out, v.Str)
		}
		return strings.Join(out, ",")
	}
	if got := types(desc); got != "function_call_output,function_call,message,message" {
		t.Errorf("newest first: %s", got)
	}
	asc := ok(convDo(t, h, "GET", "/v1/conversations/"+id+"/items?order=asc&limit=2", ""))
	list("asc page", asc)
	if types(asc) != "message,message" || !gjson.Get(asc, "has_more").Bool() {
		t.Errorf("asc page: %s", asc)
	}
	next := ok(convDo(t, h, "GET", "/v1/conversations/"+id+"/items?order=asc&include[]=message.output_text.logprobs&after="+gjson.Get(asc, "last_id").Str, ""))
	if types(next) != "function_call,function_call_output" || gjson.Get(next, "has_more").Bool() {
		t.Errorf("second page: %s", next)
	}
	user := gjson.Get(asc, "data.0")
	if user.Get("content.0.type").Str != "input_text" || user.Get("content.0.text").Str != "hello" || user.Get("status").Str != "completed" {
		t.Errorf("a string message is stored as OpenAI lists it: %s", user.Raw)
	}

	itemID := gjson.Get(asc, "data.1.id").Str
	one := ok(convDo(t, h, "GET", "/v1/conversations/"+id+"/items/"+itemID, ""))
	item("item", one)
	sdkcheck.Decode[conversations.ConversationItemUnion](t, []byte(one))
	afterDel := ok(convDo(t, h, "DELETE", "/v1/conversations/"+id+"/items/"+itemID, ""))
	conv("item delete", afterDel)
	if gjson.Get(afterDel, "id").Str != id {
		t.Errorf("item delete answers the conversation: %s", afterDel)
	}
	if st, _ := convDo(t, h, "GET", "/v1/conversations/"+id+"/items/"+itemID, ""); st != 404 {
		t.Errorf("deleted item: %d", st)
	}

	gone := ok(convDo(t, h, "DELETE", "/v1/conversations/"+id, ""))
	del("deleted", gone)
	sdkcheck.Keys(t, "deleted", sdkcheck.Decode[conversations.ConversationDeletedResource](t, []byte(gone)))
	if st, _ := convDo(t, h, "GET", "/v1/conversations/"+id, ""); st != 404 {
		t.Errorf("deleted conversation: %d", st)
	}
	empty := ok(convDo(t, h, "POST", "/v1/conversations", ``))
	conv("created empty", empty)
	list("empty list", ok(convDo(t, h, "GET", "/v1/conversations/"+gjson.Get(empty, "id").Str+"/items", "")))
}

// Bad input gets the OpenAI error shape and a 400; another tenant's
// conversation answers as an unknown one, on every endpoint.
func TestConversationErrorsAndTenancy(t *testing.T) {
	h := start(t, nil)
	_, created := convDo(t, h, "POST", "/v1/conversations", `{"items":[{"role":"user","content":"mine"}]}`)
	id := gjson.Get(created, "id").Str
	_, items := convDo(t, h, "GET", "/v1/conversations/"+id+"/items", "")
	itemID := gjson.Get(items, "first_id").Str

	many := strings.Repeat(`{"role":"user","content":"x"},`, 21)
	for _, c := range []struct {
		method, path, body string
		param              string
	}{
		{"POST", "/v1/conversations", `{"items":[` + strings.TrimSuffix(many, ",") + `]}`, "items"},
		{"POST", "/v1/conversations", `{"metadata":{"k":1}}`, "metadata"},
		{"POST", "/v1/conversations", `{"items":[{"type":"function_call","name":"f"}]}`, "items[0].call_id"},
		{"POST", "/v1/conversations", `{"items":[{"role":"wizard","content":"x"}]}`, "items[0].role"},
		{"POST", "/v1/conversations", `[]`, ""},
		{"POST", "/v1/conversations/" + id, `{}`, "metadata"},
		{"POST", "/v1/conversations/" + id + "/items", `{"items":[]}`, "items"},
		{"GET", "/v1/conversations/" + id + "/items?order=up", "", "order"},
		{"GET", "/v1/conversations/" + id + "/items?limit=0", "", "limit"},
		{"GET", "/v1/conversations/" + id + "/items?after=msg_nope", "", "after"},
		{"GET", "/v1/conversations/" + id + "/items?include=bogus", "", "include"},
	} {
		res := h.do(c.method, c.path, c.body, "x-service-tenant-id", "t1")
		apiError(t, res, http.StatusBadRequest, "invalid_body", c.param)
	}
	res := h.do("POST", "/v1/conversations", `{"items":[{"type":"item_reference","id":"msg_1"}]}`, "x-service-tenant-id", "t1")
	apiError(t, res, http.StatusBadRequest, "unsupported_parameter", "items[0].type")

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/conversations/" + id, ""},
		{"POST", "/v1/conversations/" + id, `{"metadata":{}}`},
		{"DELETE", "/v1/conversations/" + id, ""},
		{"GET", "/v1/conversations/" + id + "/items", ""},
		{"POST", "/v1/conversations/" + id + "/items", `{"items":[{"role":"user","content":"theirs"}]}`},
		{"GET", "/v1/conversations/" + id + "/items/" + itemID, ""},
		{"DELETE", "/v1/conversations/" + id + "/items/" + itemID, ""},
	} {
		for _, tenant := range []string{"t2", "t1-unknown"} {
			path := c.path
			if tenant == "t1-unknown" {
				tenant, path = "t1", strings.Replace(path, id, "conv_unknown", 1)
			}
			res := h.do(c.method, path, c.body, "x-service-tenant-id", tenant)
			apiError(t, res, http.StatusNotFound, "not_found", "")
		}
	}
	// t1's conversation is as it was.
	if _, items := convDo(t, h, "GET", "/v1/conversations/"+id+"/items", ""); gjson.Get(items, "data.#").Int() != 1 {
		t.Errorf("after t2's calls: %s", items)
	}
	res = h.do("PUT", "/v1/conversations/"+id, "", "x-service-tenant-id", "t1")
	if res.StatusCode != 405 || res.Header.Get("Allow") != "DELETE, GET, POST" {
		t.Errorf("PUT: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	res.Body.Close()
}

// openai-go's Conversations client works unchanged: create, add, list,
// retrieve, delete.
func TestConversationsOpenAIGo(t *testing.T) {
	h := start(t, nil)
	c := tenantClient(h, "t1")
	ctx := context.Background()
	conv, err := c.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		item := responses.ResponseInputItemParamOfMessage(fmt.Sprint("turn ", i), responses.EasyInputMessageRoleUser)
		if _, err := c.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{item}}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{}, option.WithMaxRetries(0))
	if err != nil || len(page.Data) != 3 {
		t.Fatalf("list: %v %+v", err, page)
	}
	if _, err := c.Conversations.Delete(ctx, conv.ID); err != nil {
		t.Fatal(err)
	}
}
