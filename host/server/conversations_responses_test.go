package server

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
)

// POST /v1/responses with conversation: the agent receives the
// conversation's items before the input, the turn is appended once the run
// completes (before the reply ends: the next read sees it), every run of
// the conversation is in its session (conv_X is sess_X), and the Response
// echoes conversation {"id"}; streamed too.
func TestResponsesConversationTurns(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	ctx := context.Background()
	conv, err := c.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("my name is Ada", responses.EasyInputMessageRoleUser)}})
	if err != nil {
		t.Fatal(err)
	}
	session := "sess_" + strings.TrimPrefix(conv.ID, "conv_")
	withConv := func(p responses.ResponseNewParams) responses.ResponseNewParams {
		p.Conversation = responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}
		return p
	}
	r1, h1 := newResponse(t, c, withConv(responses.ResponseNewParams{Input: text("what is my name")}))
	if h1.Get("x-service-session-id") != session {
		t.Errorf("turn 1 ran in session %q, want %q", h1.Get("x-service-session-id"), session)
	}
	// The agent received the stored item (4 words) before the input (4).
	if r1.Usage.InputTokens != 4+4 {
		t.Errorf("turn 1 input tokens %d, want 8: the conversation's items were not given first", r1.Usage.InputTokens)
	}
	if r1.Conversation.ID != conv.ID {
		t.Errorf("the Response echoes conversation %q: %s", r1.Conversation.ID, r1.RawJSON())
	}
	conforms(t, stateSchema(t, "Response"), "response with conversation", r1.RawJSON())
	// The response stores only its own input: the conversation keeps the
	// earlier items.
	in, err := c.Responses.InputItems.List(ctx, r1.ID, responses.InputItemListParams{})
	if err != nil || len(in.Data) != 1 || gjson.Get(in.Data[0].RawJSON(), "content.0.text").Str != "what is my name" {
		t.Errorf("input items of a conversation turn: %v %s", err, in.RawJSON())
	}

	items, err := c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items.Data {
		got = append(got, it.Role+":"+gjson.Get(it.RawJSON(), "content.0.text").Str)
	}
	want := "user:my name is Ada|user:what is my name|assistant:" + r1.OutputText()
	if strings.Join(got, "|") != want {
		t.Fatalf("items after turn 1:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if items.Data[2].ID != r1.Output[0].ID {
		t.Errorf("the output item's id %q is not the Response's %q", items.Data[2].ID, r1.Output[0].ID)
	}

	// Turn 2, given as {"id"}, continues the same session with every item.
	p2 := responses.ResponseNewParams{Input: text("again")}
	p2.Conversation = responses.ResponseNewParamsConversationUnion{OfConversationObject: &responses.ResponseConversationParam{ID: conv.ID}}
	r2, h2 := newResponse(t, c, p2)
	if h2.Get("x-service-session-id") != session {
		t.Errorf("turn 2 session %q", h2.Get("x-service-session-id"))
	}
	if want := int64(4 + 4 + len(strings.Fields(r1.OutputText())) + 1); r2.Usage.InputTokens != want {
		t.Errorf("turn 2 input tokens %d, want %d", r2.Usage.InputTokens, want)
	}

	// Streamed: the completed event echoes the conversation, and the turn
	// is there when the stream ends.
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"streamed","stream":true,"conversation":"`+conv.ID+`"}`,
		"x-service-tenant-id", "t1")
	evs := readEvents(t, res.Body)
	res.Body.Close()
	last := evs[len(evs)-1]
	if last.Event != "response.completed" || gjson.Get(last.Data, "response.conversation.id").Str != conv.ID {
		t.Errorf("last event %s %s", last.Event, last.Data)
	}
	after, err := c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Data) != 3+2+2 || after.Data[1].Role != "user" || gjson.Get(after.Data[1].RawJSON(), "content.0.text").Str != "streamed" {
		t.Errorf("items after the streamed turn: %s", after.RawJSON())
	}

	// x-service-session-id names the same session: the native API lists
	// the conversation's runs by it.
	runs := h.do("GET", "/runner/v1/runs?session_id="+session, "", "x-service-tenant-id", "t1")
	if b := body(t, runs); gjson.GetBytes(b, "data.#").Int() != 3 {
		t.Errorf("runs of the session: %s", b)
	}
}

// conversation with previous_response_id is a 400, an unknown or another
// tenant's conversation a 404 naming conversation, a malformed one a 400;
// none creates a run.
func TestResponsesConversationErrors(t *testing.T) {
	h := stateServer(t)
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	id := gjson.Get(created, "id").Str
	for _, c := range []struct {
		body, tenant string
		status       int
		code, param  string
	}{
		{`{"model":"service","input":"x","conversation":"` + id + `","previous_response_id":"resp_1"}`, "t1", 400, "invalid_body", "conversation"},
		{`{"model":"service","input":"x","conversation":{"id":"` + id + `"},"previous_response_id":"resp_1"}`, "t1", 400, "invalid_body", "conversation"},
		{`{"model":"service","input":"x","conversation":7}`, "t1", 400, "invalid_body", "conversation"},
		{`{"model":"service","input":"x","conversation":{}}`, "t1", 400, "invalid_body", "conversation"},
		{`{"model":"service","input":"x","conversation":"conv_unknown"}`, "t1", 404, "not_found", "conversation"},
		{`{"model":"service","input":"x","conversation":"` + id + `"}`, "t2", 404, "not_found", "conversation"},
	} {
		res := h.do("POST", "/v1/responses", c.body, "x-service-tenant-id", c.tenant)
		apiError(t, res, c.status, c.code, c.param)
	}
	if _, items := convDo(t, h, "GET", "/v1/conversations/"+id+"/items", ""); gjson.Get(items, "data.#").Int() != 0 {
		t.Errorf("refused requests added items: %s", items)
	}
}

// x-service-session-id names a conversation's session too, even before
// its first run; another tenant's is unknown.
func TestConversationSessionHeader(t *testing.T) {
	h := stateServer(t)
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	session := "sess_" + strings.TrimPrefix(gjson.Get(created, "id").Str, "conv_")
	for i := range 2 {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"hi"}`,
			"x-service-tenant-id", "t1", "x-service-session-id", session)
		b := body(t, res)
		if res.StatusCode != 200 || res.Header.Get("x-service-session-id") != session {
			t.Fatalf("run %d in the conversation's session: %d %s %s", i, res.StatusCode, res.Header.Get("x-service-session-id"), b)
		}
	}
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"hi"}`, "x-service-tenant-id", "t2", "x-service-session-id", session)
	if res.StatusCode != 404 {
		t.Errorf("another tenant continued the session: %d", res.StatusCode)
	}
	res.Body.Close()
}

// A tool loop through conversation: the model's call is appended, the
// client's result continues the conversation, the agent answers from it.
func TestResponsesConversationToolLoop(t *testing.T) {
	h := stateServer(t)
	_, created := convDo(t, h, "POST", "/v1/conversations", `{}`)
	id := gjson.Get(created, "id").Str
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	st, r1 := convDo(t, h, "POST", "/v1/responses", `{"model":"service","input":"get_weather Paris","conversation":"`+id+`",`+tools+`}`)
	call := gjson.Get(r1, `output.#(type=="function_call")`)
	if st != 200 || !call.Exists() {
		t.Fatalf("turn 1: %d %s", st, r1)
	}
	st, r2 := convDo(t, h, "POST", "/v1/responses", `{"model":"service","conversation":{"id":"`+id+`"},`+tools+
		`,"input":[{"type":"function_call_output","call_id":"`+call.Get("call_id").Str+`","output":"sunny"}]}`)
	if st != 200 || gjson.Get(r2, "output_text").Str != "get_weather returned: sunny" {
		t.Fatalf("turn 2: %d %s", st, r2)
	}
	_, items := convDo(t, h, "GET", "/v1/conversations/"+id+"/items?order=asc", "")
	var types []string
	for _, v := range gjson.Get(items, "data.#.type").Array() {
		types = append(types, v.Str)
	}
	if got := strings.Join(types, ","); got != "message,function_call,function_call_output,message" {
		t.Errorf("items: %s\n%s", got, items)
	}
}
