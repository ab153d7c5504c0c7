package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/runner"
)

// The Responses API's state (README.md "Responses that remember") end to end: a
// real server and SQLite file, openai-go as the client.

func stateServer(t *testing.T) *harness {
	return start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(2 * time.Millisecond) })
}

func tenantClient(h *harness, tenant string) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(h.URL+"/v1/"),
		option.WithAPIKey(tokApp),
		option.WithHeader("x-service-actor-id", "user-"+tenant),
		option.WithHeader("x-service-tenant-id", tenant),
		option.WithMaxRetries(0),
	)
}

// newResponse creates a response and returns it with its reply headers.
func newResponse(t *testing.T, c openai.Client, p responses.ResponseNewParams) (*responses.Response, http.Header) {
	t.Helper()
	var raw *http.Response
	p.Model = "service"
	r, err := c.Responses.New(context.Background(), p, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	checkServiceMetadata(t, r.RawJSON(), raw.Header)
	return r, raw.Header
}

// checkServiceMetadata checks the contract fields of a Response object.
func checkServiceMetadata(t *testing.T, raw string, hd http.Header) {
	t.Helper()
	if !gjson.Get(raw, "output_text").Exists() {
		t.Errorf("output_text missing: %s", raw)
	}
	if hd == nil {
		return
	}
	if gjson.Get(raw, "metadata.service.session_id").Str != hd.Get("x-service-session-id") ||
		gjson.Get(raw, "metadata.service.run_id").Str != hd.Get("x-service-run-id") || hd.Get("x-service-run-id") == "" {
		t.Errorf("metadata.service %s does not match the run headers %v", gjson.Get(raw, "metadata").Raw, hd)
	}
}

func text(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// apiError checks an error reply's status, code and param.
func apiError(t *testing.T, res *http.Response, status int, code, param string) {
	t.Helper()
	b := body(t, res)
	e := gjson.GetBytes(b, "error")
	if res.StatusCode != status || e.Get("code").Str != code || e.Get("param").String() != param ||
		!e.Get("message").Exists() || !e.Get("type").Exists() {
		t.Errorf("got %d %s; want %d code %q param %q", res.StatusCode, b, status, code, param)
	}
	if res.Header.Get("x-service-run-id") != "" {
		t.Errorf("a refused request created run %s", res.Header.Get("x-service-run-id"))
	}
}

func TestResponsesTwoTurns(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	ctx := context.Background()

	r1, h1 := newResponse(t, c, responses.ResponseNewParams{Input: text("my name is Ada"),
		Metadata: map[string]string{"ticket": "T-7"}})
	if r1.OutputText() != "You said: my name is Ada" || gjson.Get(r1.RawJSON(), "metadata.ticket").Str != "T-7" {
		t.Fatalf("turn 1: %s", r1.RawJSON())
	}
	r2, h2 := newResponse(t, c, responses.ResponseNewParams{Input: text("what is my name"),
		PreviousResponseID: openai.String(r1.ID)})
	if h2.Get("x-service-session-id") != h1.Get("x-service-session-id") ||
		h2.Get("x-service-thread-id") != h1.Get("x-service-thread-id") {
		t.Errorf("turn 2 is not in turn 1's session and thread: %v vs %v", h2, h1)
	}
	if r2.PreviousResponseID != r1.ID {
		t.Errorf("previous_response_id %q", r2.PreviousResponseID)
	}
	// The agent received turn 1 (4 + 5 words) before turn 2 (4 words).
	if r2.Usage.InputTokens != 4+6+4 {
		t.Errorf("turn 2 input tokens %d, want 14: the earlier turns were not replayed", r2.Usage.InputTokens)
	}
	// A third turn replays the whole chain.
	r3, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("again"), PreviousResponseID: openai.String(r2.ID)})
	if r3.Usage.InputTokens != 14+6+1 {
		t.Errorf("turn 3 input tokens %d, want 21", r3.Usage.InputTokens)
	}

	got, err := c.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RawJSON() != r1.RawJSON() {
		t.Errorf("GET returned\n%s\nnot the response as recorded\n%s", got.RawJSON(), r1.RawJSON())
	}
	items, err := c.Responses.InputItems.List(ctx, r2.ID, responses.InputItemListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items.Data) != 1 || items.Data[0].Role != "user" || gjson.Get(items.Data[0].RawJSON(), "content.0.text").Str != "what is my name" ||
		!strings.HasPrefix(items.Data[0].ID, "msg_") {
		t.Errorf("input items of turn 2: %s", items.RawJSON())
	}

	// Native side: the run shows its input and output.
	run := h.do("GET", "/runner/v1/runs/"+h2.Get("x-service-run-id"), "", "x-service-tenant-id", "t1")
	rb := body(t, run)
	if gjson.GetBytes(rb, "input.0.content").Str != "what is my name" || gjson.GetBytes(rb, "output").Str != r2.OutputText() {
		t.Errorf("native run: %s", rb)
	}

	// Delete: gone for GET, input_items and as a previous response; the
	// run stays.
	if err := c.Responses.Delete(ctx, r1.ID); err != nil {
		t.Fatal(err)
	}
	apiError(t, h.do("GET", "/v1/responses/"+r1.ID, "", "x-service-tenant-id", "t1"), 404, "not_found", "")
	apiError(t, h.do("DELETE", "/v1/responses/"+r1.ID, "", "x-service-tenant-id", "t1"), 404, "not_found", "")
	apiError(t, h.do("GET", "/v1/responses/"+r1.ID+"/input_items", "", "x-service-tenant-id", "t1"), 404, "not_found", "")
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","previous_response_id":"`+r1.ID+`"}`,
		"x-service-tenant-id", "t1"), 400, "previous_response_not_found", "previous_response_id")
	if r := h.run(h1.Get("x-service-run-id")); r.Status != runner.StatusCompleted {
		t.Errorf("the deleted response's run: %+v", r)
	}
}

// The Vercel AI SDK's second turn: earlier items by reference, and
// replayed assistant messages.
func TestResponsesItemReference(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	r1, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("hello there")})
	msgID := r1.Output[0].ID
	in := `[{"role":"user","content":[{"type":"input_text","text":"hello there"}]},{"type":"item_reference","id":"` + msgID + `"},` +
		`{"role":"user","content":[{"type":"input_text","text":"more"}]}]`
	res := h.do("POST", "/v1/responses", `{"model":"service","input":`+in+`}`, "x-service-tenant-id", "t1")
	b := body(t, res)
	// 2 + 4 (the referenced "You said: hello there") + 1 words.
	if res.StatusCode != 200 || gjson.GetBytes(b, "usage.input_tokens").Int() != 7 {
		t.Fatalf("item_reference turn: %d %s", res.StatusCode, b)
	}
	replayed := `[{"role":"user","content":"hello there"},{"type":"message","role":"assistant","id":"` + msgID +
		`","status":"completed","content":[{"type":"output_text","text":"You said: hello there","annotations":[]}]},{"role":"user","content":"more"}]`
	res = h.do("POST", "/v1/responses", `{"model":"service","store":false,"input":`+replayed+`}`, "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 || gjson.GetBytes(b, "usage.input_tokens").Int() != 7 {
		t.Fatalf("replayed assistant item: %d %s", res.StatusCode, b)
	}

	for _, c := range []struct{ name, tenant, input, code, param string }{
		{"unknown id", "t1", `[{"role":"user","content":"a"},{"type":"item_reference","id":"msg_nope"}]`, "item_not_found", "input[1]"},
		{"another tenant's id", "t2", `[{"type":"item_reference","id":"` + msgID + `"}]`, "item_not_found", "input[0]"},
		{"no id", "t1", `[{"type":"item_reference"}]`, "invalid_body", "input[0].id"},
		{"numeric id", "t1", `[{"type":"item_reference","id":3}]`, "invalid_body", "input[0].id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":`+c.input+`}`, "x-service-tenant-id", c.tenant),
				400, c.code, c.param)
		})
	}
}

func TestResponsesBackground(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	ctx := context.Background()

	r, hd := newResponse(t, c, responses.ResponseNewParams{Input: text("count to three please"), Background: openai.Bool(true)})
	if (r.Status != "in_progress" && r.Status != "queued") || !r.Background {
		t.Fatalf("background reply: %s", r.RawJSON())
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.Status != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("never completed: %s", r.RawJSON())
		}
		time.Sleep(10 * time.Millisecond)
		var err error
		if r, err = c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil {
			t.Fatal(err)
		}
		checkServiceMetadata(t, r.RawJSON(), hd)
	}
	if r.OutputText() != "You said: count to three please" {
		t.Errorf("background result: %s", r.RawJSON())
	}
	// Cancelling a finished response is refused, as OpenAI does.
	apiError(t, h.do("POST", "/v1/responses/"+r.ID+"/cancel", "", "x-service-tenant-id", "t1"), 400, "invalid_body", "")
	fg, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("hi")})
	apiError(t, h.do("POST", "/v1/responses/"+fg.ID+"/cancel", "", "x-service-tenant-id", "t1"), 400, "invalid_body", "")

	t.Run("cancel", func(t *testing.T) {
		long := strings.Repeat("word ", 2000)
		r, hd := newResponse(t, c, responses.ResponseNewParams{Input: text(long), Background: openai.Bool(true)})
		h.waitRun(hd.Get("x-service-run-id"), func(r runner.Run) bool { return r.Status == runner.StatusRunning })
		time.Sleep(30 * time.Millisecond) // let it consume a few tokens
		cr, err := c.Responses.Cancel(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cr.Status != "cancelled" {
			t.Fatalf("cancel: %s", cr.RawJSON())
		}
		run := h.run(hd.Get("x-service-run-id"))
		if run.Status != runner.StatusCancelled || run.Usage == nil || run.Usage.OutputTokens == 0 {
			t.Errorf("cancelled run: %+v usage %+v", run, run.Usage)
		}
		// Again: the same cancelled response.
		if again, err := c.Responses.Cancel(ctx, r.ID); err != nil || again.Status != "cancelled" {
			t.Errorf("second cancel: %v %v", err, again)
		}
	})

	t.Run("outlives its client", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "service",
			Input: text(strings.Repeat("go ", 100)), Background: openai.Bool(true)})
		var id string
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.created" {
				id = ev.Response.ID
				break
			}
		}
		cancel()
		stream.Close()
		if id == "" {
			t.Fatal("no response.created")
		}
		h.waitRun(runOf(id), func(r runner.Run) bool { return r.Status == runner.StatusCompleted })
	})
}

// A stream cut mid-way and resumed with starting_after joins to the text
// of an uncut run: nothing lost, nothing repeated.
func TestResponsesStreamResume(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	ctx := context.Background()
	input := strings.Repeat("resume me ", 60)

	collect := func(s interface {
		Next() bool
		Current() responses.ResponseStreamEventUnion
		Err() error
	}, stopAfter int) (text string, last int64, n int, final *responses.Response) {
		for s.Next() {
			ev := s.Current()
			if ev.SequenceNumber != last+1 && n > 0 {
				t.Errorf("sequence %d after %d", ev.SequenceNumber, last)
			}
			last = ev.SequenceNumber
			n++
			switch ev.Type {
			case "response.output_text.delta":
				text += ev.Delta
			case "response.completed":
				r := ev.Response
				final = &r
				checkServiceMetadata(t, ev.Response.RawJSON(), nil)
			}
			if n == stopAfter {
				break
			}
		}
		return text, last, n, final
	}

	uncut, _, _, _ := collect(c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "service", Input: text(input)}), -1)

	cutCtx, cut := context.WithCancel(ctx)
	s1 := c.Responses.NewStreaming(cutCtx, responses.ResponseNewParams{Model: "service", Input: text(input), Background: openai.Bool(true)})
	var id string
	if s1.Next() {
		id = s1.Current().Response.ID
	}
	head, last, _, _ := collect(s1, 10)
	cut()
	s1.Close()
	if id == "" || last < 5 {
		t.Fatalf("first part: id %q last %d", id, last)
	}
	s2 := c.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(last)})
	tail, _, n, final := collect(s2, -1)
	if err := s2.Err(); err != nil {
		t.Fatal(err)
	}
	if head+tail != uncut || final == nil || final.OutputText() != uncut || n == 0 {
		t.Errorf("resumed text\n%q\nwant\n%q (final %v)", head+tail, uncut, final)
	}

	// Replayed from the store once the run is over: the whole stream again.
	all, _, _, _ := collect(c.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(0)}), -1)
	if all != uncut {
		t.Errorf("replay from the store: %q", all)
	}
	for _, c := range []struct{ q, param string }{
		{"starting_after=-1", "starting_after"}, {"starting_after=x", "starting_after"},
		{"starting_after=100000", "starting_after"},
	} {
		apiError(t, h.do("GET", "/v1/responses/"+id+"?stream=true&"+c.q, "", "x-service-tenant-id", "t1"), 400, "invalid_body", c.param)
	}

	// The native events API: the same events with ids, resumable.
	res := h.do("GET", "/runner/v1/runs/"+runOf(id)+"/events", "", "x-service-tenant-id", "t1", "Last-Event-ID", "3")
	b := string(body(t, res))
	if res.StatusCode != 200 || !strings.HasPrefix(b, "id: 4\nevent: response.output_text.delta\n") ||
		!strings.Contains(b, "event: response.completed") {
		t.Errorf("native events: %d %.300s", res.StatusCode, b)
	}
}

func TestResponsesStateBadInput(t *testing.T) {
	h := stateServer(t)
	c := tenantClient(h, "t1")
	r1, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("stored")})
	nostore, nh := newResponse(t, c, responses.ResponseNewParams{Input: text("secret words"), Store: openai.Bool(false)})

	// store:false: recorded without input and output, and not found.
	for _, p := range []string{"", "/input_items"} {
		apiError(t, h.do("GET", "/v1/responses/"+nostore.ID+p, "", "x-service-tenant-id", "t1"), 404, "not_found", "")
	}
	run := h.do("GET", "/runner/v1/runs/"+nh.Get("x-service-run-id"), "", "x-service-tenant-id", "t1")
	if rb := body(t, run); strings.Contains(string(rb), "secret") || gjson.GetBytes(rb, "usage.total_tokens").Int() == 0 {
		t.Errorf("store:false run: %s", rb)
	}
	// Another tenant's id answers exactly like an unknown one.
	for _, id := range []string{r1.ID, "resp_unknown"} {
		for _, p := range []struct{ method, path string }{{"GET", ""}, {"DELETE", ""}, {"GET", "/input_items"}, {"POST", "/cancel"}} {
			res := h.do(p.method, "/v1/responses/"+id+p.path, "", "x-service-tenant-id", "t2")
			b := body(t, res)
			if res.StatusCode != 404 || gjson.GetBytes(b, "error.code").Str != "not_found" {
				t.Errorf("%s %s as t2: %d %s", p.method, p.path, res.StatusCode, b)
			}
		}
	}
	for _, c := range []struct{ name, tenant, body, status, code, param string }{
		{"unknown previous", "t1", `{"model":"service","input":"x","previous_response_id":"resp_nope"}`, "400", "previous_response_not_found", "previous_response_id"},
		{"not a response id", "t1", `{"model":"service","input":"x","previous_response_id":"msg_nope"}`, "400", "previous_response_not_found", "previous_response_id"},
		{"another tenant's previous", "t2", `{"model":"service","input":"x","previous_response_id":"` + r1.ID + `"}`, "400", "previous_response_not_found", "previous_response_id"},
		{"store:false previous", "t1", `{"model":"service","input":"x","previous_response_id":"` + nostore.ID + `"}`, "400", "previous_response_not_found", "previous_response_id"},
		{"previous with conversation", "t1", `{"model":"service","input":"x","previous_response_id":"` + r1.ID + `","conversation":"conv_1"}`, "400", "invalid_body", "conversation"},
		{"background without store", "t1", `{"model":"service","input":"x","background":true,"store":false}`, "400", "invalid_body", "background"},
		{"n above 1", "t1", `{"model":"service","input":"x","n":3}`, "400", "unsupported_parameter", "n"},
		{"prompt template", "t1", `{"model":"service","input":"x","prompt":{"id":"pmpt_1"}}`, "400", "unsupported_parameter", "prompt"},
		{"truncation auto", "t1", `{"model":"service","input":"x","truncation":"auto"}`, "400", "unsupported_parameter", "truncation"},
		{"context_management", "t1", `{"model":"service","input":"x","context_management":[{"type":"compaction"}]}`, "400", "unsupported_parameter", "context_management[0].compact_threshold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _ := strconv.Atoi(c.status)
			apiError(t, h.do("POST", "/v1/responses", c.body, "x-service-tenant-id", c.tenant), st, c.code, c.param)
		})
	}
	// Passed on or safe to ignore: accepted.
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","prompt_cache_key":"k","safety_identifier":"s",
		"service_tier":"auto","truncation":"disabled","include":["unknown.thing"]}`, "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 200 {
		t.Errorf("ignorable fields: %d %s", res.StatusCode, b)
	}
	// input_items paging.
	r3, _ := newResponse(t, c, responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("one", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("two", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("three", responses.EasyInputMessageRoleUser),
	}}})
	res = h.do("GET", "/v1/responses/"+r3.ID+"/input_items?limit=2&order=asc", "", "x-service-tenant-id", "t1")
	var page struct {
		Data []struct {
			ID      string `json:"id"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"data"`
		LastID  string `json:"last_id"`
		HasMore bool   `json:"has_more"`
	}
	if err := json.Unmarshal(body(t, res), &page); err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[1].Content[0].Text != "two" {
		t.Fatalf("page 1: %v %+v", err, page)
	}
	res = h.do("GET", "/v1/responses/"+r3.ID+"/input_items?order=asc&after="+page.LastID, "", "x-service-tenant-id", "t1")
	if err := json.Unmarshal(body(t, res), &page); err != nil || len(page.Data) != 1 || page.HasMore || page.Data[0].Content[0].Text != "three" {
		t.Fatalf("page 2: %v %+v", err, page)
	}
	apiError(t, h.do("GET", "/v1/responses/"+r3.ID+"/input_items?order=up", "", "x-service-tenant-id", "t1"), 400, "invalid_body", "order")
	apiError(t, h.do("GET", "/v1/responses/"+r3.ID+"/input_items?limit=0", "", "x-service-tenant-id", "t1"), 400, "invalid_body", "limit")
	apiError(t, h.do("GET", "/v1/responses/"+r1.ID+"?stream=true", "", "x-service-tenant-id", "t1"), 400, "invalid_body", "stream")
}

// A stored response without its final object yet (in progress, cancelled)
// is rebuilt by the configured Responses result mapping plugin, as its
// response.created and response.completed are: never by a native copy of
// the default mapping inside the host.
func TestStoredResponseRebuiltByConfiguredPlugin(t *testing.T) {
	faulty := plugintest.Build(t, "./testdata/faulty")
	h := start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(2 * time.Millisecond)
		c.Chains[config.ChainResponses] = config.Chain{MapRequest: faulty, Translate: faulty}
	})
	long := strings.Repeat("word ", 2000)
	res := h.do("POST", "/v1/responses", `{"model":"service","background":true,"user":"mark-mapped-by","input":"`+long+`"}`)
	b := body(t, res)
	id := gjson.GetBytes(b, "id").Str
	if res.StatusCode != 200 || gjson.GetBytes(b, "x_mapped_by").Str != "faulty" {
		t.Fatalf("background reply: %d %.300s", res.StatusCode, b)
	}
	h.waitRun(runOf(id), func(r runner.Run) bool { return r.Status == runner.StatusRunning })
	for _, op := range []struct{ method, path, status string }{
		{"GET", "", "in_progress"},
		{"POST", "/cancel", "cancelled"},
	} {
		res := h.do(op.method, "/v1/responses/"+id+op.path, "")
		b := body(t, res)
		if res.StatusCode != 200 || gjson.GetBytes(b, "status").Str != op.status {
			t.Fatalf("%s %s: %d %.300s", op.method, op.path, res.StatusCode, b)
		}
		if gjson.GetBytes(b, "x_mapped_by").Str != "faulty" {
			t.Fatalf("%s %s: the object was not mapped by the configured plugin: %.300s", op.method, op.path, b)
		}
	}
}

// A background stream that fails tells its readers how it ended with the
// same error as a foreground stream would: one mapping from outcome to
// client error (filters/run), not a second one for background runs.
func TestBackgroundStreamErrorMatchesForeground(t *testing.T) {
	h := stateServer(t)
	lastError := func(bodyJSON string) gjson.Result {
		t.Helper()
		res := h.do("POST", "/v1/responses", bodyJSON)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, body(t, res))
		}
		defer res.Body.Close()
		evs := readEvents(t, res.Body)
		last := evs[len(evs)-1]
		if last.Event != "error" {
			t.Fatalf("the stream did not end with an error event: %+v", last)
		}
		return gjson.Parse(last.Data)
	}
	fg := lastError(`{"model":"service","stream":true,"input":"/fail-mid please"}`)
	bg := lastError(`{"model":"service","stream":true,"background":true,"input":"/fail-mid please"}`)
	if fg.Get("code").Str != "provider_error" || bg.Get("code").Str != fg.Get("code").Str {
		t.Fatalf("codes: foreground %s, background %s", fg.Raw, bg.Raw)
	}
	if !strings.HasPrefix(fg.Get("message").Str, bg.Get("message").Str) || bg.Get("message").Str == "" {
		t.Fatalf("messages: foreground %q, background %q", fg.Get("message").Str, bg.Get("message").Str)
	}
}
