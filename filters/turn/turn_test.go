package turn_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/filters/conversation"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/turn"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// The room's tests run the Responses chain as the host builds it
// (builtin.Chain: the default mapping run natively, a real run service
// on a real SQLite file, a scripted agent), without a server: what the
// agent is given is the turn's assembled context, what the store holds
// after is its commit.

const tenant = "acme"

// agent answers each run and records what it was given: the compaction
// prompt gets a summary of what precedes it, any other input answer (or
// fail, when set).
type agent struct {
	mu     sync.Mutex
	seen   [][]runner.Message
	answer string
	fail   error
	gate   chan struct{} // when set, a turn (not a compaction) waits for it
}

func (a *agent) Run(ctx context.Context, req runner.Request, _ func(runner.Event) error) (runner.Result, error) {
	a.mu.Lock()
	a.seen = append(a.seen, slices.Clone(req.Input))
	answer, fail, gate := a.answer, a.fail, a.gate
	a.mu.Unlock()
	u := runner.Usage{InputTokens: 10 * len(req.Input), OutputTokens: 3, TotalTokens: 10*len(req.Input) + 3}
	if n := len(req.Input); n > 0 && runner.IsCompactionPrompt(req.Input[n-1]) {
		return runner.Result{Text: fmt.Sprintf("summary of %d messages", n-1), FinishReason: "stop", Usage: u}, nil
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return runner.Result{}, context.Cause(ctx)
		}
	}
	if fail != nil {
		return runner.Result{}, fail
	}
	return runner.Result{Text: answer, FinishReason: "stop", Usage: u}, nil
}

// last is what the agent was given in its last run.
func (a *agent) last() []runner.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[len(a.seen)-1]
}

func (a *agent) runs() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.seen)
}

type room struct {
	h     filters.Handler
	runs  *filtertest.Runs
	agent *agent
	keys  *compaction.Keys
}

var (
	engineOnce sync.Once
	engine     *runtime.Engine
	engineErr  error
)

// newRoom builds the Responses chain on a fresh run service. count is
// the provider's token count context_management holds against its
// threshold: a token per 4 bytes of content here.
func newRoom(t *testing.T) *room {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = runtime.NewEngine(context.Background(), runtime.EngineConfig{}) })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	p, err := native.Load(engine, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Tokens: []auth.Token{{Name: "app", Hash: sha256.Sum256([]byte("sk-test")), Tenant: tenant}}})
	if err != nil {
		t.Fatal(err)
	}
	ag := &agent{answer: "Paris"}
	runs := filtertest.NewRuns(t, ag)
	keys := compaction.ProcessKeys()
	h, err := builtin.Chain(builtin.Deps{Auth: a, Body: body.New(1<<20, 0), Runner: runs.Service,
		Plugins: builtin.Plugins{Request: p, Result: p}, Compaction: keys, InputTokens: count})
	if err != nil {
		t.Fatal(err)
	}
	return &room{h: h, runs: runs, agent: ag, keys: keys}
}

func count(req runner.Request) int {
	n := len(req.Instructions)
	for _, m := range req.Input {
		n += len(m.Content)
	}
	return n / 4
}

// post runs one POST /v1/responses through the chain and returns its
// status and body.
func (r *room) post(t *testing.T, ctx context.Context, body string) (int, string) {
	t.Helper()
	return r.postTurn(t, ctx, body, nil)
}

// postTurn is post with the turn the host starts the exchange with (a
// socket's, which remembers the turn).
func (r *room) postTurn(t *testing.T, ctx context.Context, body string, tn *turn.Turn) (int, string) {
	t.Helper()
	x, rec := filtertest.Exchange(filters.Responses, body, "Authorization", "Bearer sk-test")
	x.Body = nil // the body stage reads it
	x.Turn = tn
	filtertest.Serve(ctx, r.h, x)
	return rec.Code, rec.Body.String()
}

func (r *room) ok(t *testing.T, body string) string {
	t.Helper()
	code, reply := r.post(t, t.Context(), body)
	if code != 200 {
		t.Fatalf("%d %s", code, reply)
	}
	return reply
}

// conversation creates a conversation of the tenant holding items (JSON
// objects of OpenAI's item shape) and returns its id.
func (r *room) conversation(t *testing.T, items ...string) string {
	t.Helper()
	session := runner.NewID(contract.SessionPrefix)
	var raw []json.RawMessage
	for _, it := range items {
		raw = append(raw, json.RawMessage(it))
	}
	its, err := conversation.NewItems(raw, "items", nil) // as the Conversations API adds them
	if err != nil {
		t.Fatal(err)
	}
	if err = r.runs.Service.Conversations().CreateConversation(t.Context(),
		runner.Conversation{SessionID: session, TenantID: tenant, Metadata: []byte("{}")}, its); err != nil {
		t.Fatal(err)
	}
	return contract.ConversationID(session)
}

// items are the types and texts of a conversation's items, in order.
func (r *room) items(t *testing.T, conv string) []string {
	t.Helper()
	session, _ := contract.SessionIDOf(conv)
	its, _, err := r.runs.Service.Conversations().ConversationItems(t.Context(), tenant, session, "", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range its {
		g := gjson.ParseBytes(it.Data)
		out = append(out, g.Get("type").Str+":"+g.Get("role").Str+":"+g.Get("content.0.text").Str)
	}
	return out
}

// roles are the role and content of messages, one string each.
func roles(ms []runner.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

func user(text string) string {
	return `{"type":"message","role":"user","content":"` + text + `"}`
}

// TestAssembly: what the agent of a turn is given, in order — the turns
// of previous_response_id or the conversation's items, a compaction
// item's summary before the turns it replaces, the cached items a socket
// sends as input, then the new input — read once.
func TestAssembly(t *testing.T) {
	r := newRoom(t)

	first := r.ok(t, `{"model":"service","input":"capital of France?"}`)
	prev := gjson.Get(first, "id").Str

	// previous_response_id: the earlier turn, then the input; items the
	// socket's cache sends (a store:false turn after the stored one) sit
	// in the input, after the replayed turns.
	sealed := r.keys.Seal(tenant, "the user likes Paris")
	r.ok(t, `{"model":"service","previous_response_id":"`+prev+`","input":[`+
		user("cached question")+`,{"type":"message","role":"assistant","content":"cached answer"},`+
		`{"type":"compaction","encrypted_content":"`+sealed+`"},`+user("and of Italy?")+`]}`)
	want := []string{"user:capital of France?", "assistant:Paris",
		"system:" + runner.CompactedContextPrefix + "the user likes Paris",
		"user:cached question", "assistant:cached answer", "user:and of Italy?"}
	if got := roles(r.agent.last()); !slices.Equal(got, want) {
		t.Errorf("previous response: the agent got\n%q\nwant\n%q", got, want)
	}

	// A conversation: its items (a compaction item among them opened),
	// then the input.
	conv := r.conversation(t, user("hello"), `{"type":"compaction","encrypted_content":"`+sealed+`"}`,
		`{"type":"message","role":"assistant","content":"hi"}`)
	r.ok(t, `{"model":"service","conversation":"`+conv+`","input":"capital of Spain?"}`)
	want = []string{"system:" + runner.CompactedContextPrefix + "the user likes Paris",
		"user:hello", "assistant:hi", "user:capital of Spain?"}
	if got := roles(r.agent.last()); !slices.Equal(got, want) {
		t.Errorf("conversation: the agent got\n%q\nwant\n%q", got, want)
	}

	// A compaction item of the conversation that does not open: 400
	// naming conversation, before any run.
	runs := r.agent.runs()
	forged := r.conversation(t, `{"type":"compaction","encrypted_content":"rc1.process.AAAA"}`)
	if code, reply := r.post(t, t.Context(), `{"model":"service","conversation":"`+forged+`","input":"who am I"}`); code != 400 ||
		gjson.Get(reply, "error.param").Str != "conversation" || gjson.Get(reply, "error.code").Str != "invalid_body" {
		t.Errorf("a conversation holding a forged item: %d %s, want 400 invalid_body naming conversation", code, reply)
	}

	// Both at once is refused before any run: a conversation holds the
	// earlier turns already.
	if code, reply := r.post(t, t.Context(), `{"model":"service","conversation":"`+conv+`","previous_response_id":"`+prev+`","input":"x"}`); code != 400 ||
		gjson.Get(reply, "error.param").Str != "conversation" {
		t.Errorf("conversation and previous_response_id: %d %s", code, reply)
	}
	if r.agent.runs() != runs {
		t.Error("a refused turn ran")
	}
}

// TestCommit: a completed conversation turn appends its input and the
// output of the Response the client got, with its ids; a failed or
// cancelled turn appends nothing.
func TestCommit(t *testing.T) {
	r := newRoom(t)
	conv := r.conversation(t, user("hello"))

	reply := r.ok(t, `{"model":"service","conversation":"`+conv+`","input":"capital of France?"}`)
	want := []string{"message:user:hello", "message:user:capital of France?", "message:assistant:Paris"}
	if got := r.items(t, conv); !slices.Equal(got, want) {
		t.Fatalf("after a completed turn: %q, want %q", got, want)
	}
	session, _ := contract.SessionIDOf(conv)
	its, _, err := r.runs.Service.Conversations().ConversationItems(t.Context(), tenant, session, "", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, id := its[2].ID, gjson.Get(reply, "output.0.id").Str; got != id {
		t.Errorf("the appended output item is %s, the Response's %s", got, id)
	}

	// A failed turn.
	r.agent.mu.Lock()
	r.agent.fail = errors.New("upstream down")
	r.agent.mu.Unlock()
	if code, reply := r.post(t, t.Context(), `{"model":"service","conversation":"`+conv+`","input":"and of Italy?"}`); code < 500 {
		t.Errorf("a failed turn answered %d %s", code, reply)
	}
	if got := r.items(t, conv); !slices.Equal(got, want) {
		t.Errorf("after a failed turn: %q, want %q (nothing appended)", got, want)
	}

	// A cancelled turn: the client leaves while the agent works.
	gate := make(chan struct{})
	defer close(gate)
	r.agent.mu.Lock()
	r.agent.fail, r.agent.gate = nil, gate
	r.agent.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.post(t, ctx, `{"model":"service","conversation":"`+conv+`","input":"and of Spain?"}`)
	}()
	for r.agent.runs() < 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	// The runs end in order: the completed turn's, the failed one's, then
	// the cancelled one's.
	for _, want := range []runner.Status{runner.StatusCompleted, runner.StatusFailed, runner.StatusCancelled} {
		if run := r.runs.WaitEnded(t, 5*time.Second); run.Status != want {
			t.Errorf("a run ended %s, want %s", run.Status, want)
		}
	}
	if got := r.items(t, conv); !slices.Equal(got, want) {
		t.Errorf("after a cancelled turn: %q, want %q (nothing appended)", got, want)
	}
}

// TestCompactionTrigger: a compaction_trigger makes the turn the
// compaction: its agent is given everything before the trigger and the
// prompt, and the Response's output is the sealed item alone, which opens
// to the agent's summary.
func TestCompactionTrigger(t *testing.T) {
	r := newRoom(t)
	reply := r.ok(t, `{"model":"service","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"input":[`+
		user("hello")+`,{"type":"message","role":"assistant","content":"hi"},{"type":"compaction_trigger"}]}`)
	got := roles(r.agent.last())
	want := []string{"user:hello", "assistant:hi", "user:" + runner.CompactionPrompt}
	if !slices.Equal(got, want) {
		t.Errorf("the agent got %q, want %q", got, want)
	}
	out := gjson.Get(reply, "output").Array()
	if len(out) != 1 || out[0].Get("type").Str != "compaction" || gjson.Get(reply, "output_text").Str != "" {
		t.Fatalf("output: want the compaction item alone: %s", reply)
	}
	summary, err := r.keys.Open(tenant, out[0].Get("encrypted_content").Str)
	if err != nil || summary != "summary of 2 messages" {
		t.Errorf("the item opens to %q, %v", summary, err)
	}
	if strings.Contains(reply, "summary of") {
		t.Error("the summary is in clear in the Response")
	}
}

// TestThreshold: context_management compacts what precedes the turn's
// last user message when the whole counts more than the threshold, in a
// run of its own (responses.compact, started and ended by the run
// service, its usage recorded and added to the turn's); a threshold the
// current message crosses alone compacts nothing.
func TestThreshold(t *testing.T) {
	r := newRoom(t)
	cm := `,"context_management":[{"type":"compaction","compact_threshold":1000}]`
	long := strings.Repeat("word ", 1000) // 1250 tokens by count

	// Crossed by the current message alone: with nothing before it, and
	// with a short history before it.
	for _, input := range []string{`"` + long + `"`,
		`[` + user("hello") + `,{"type":"message","role":"assistant","content":"hi"},` + user(long) + `]`} {
		runs := r.agent.runs()
		reply := r.ok(t, `{"model":"service","input":`+input+cm+`}`)
		if r.agent.runs() != runs+1 {
			t.Errorf("%d runs for a turn whose message alone crosses the threshold; want the turn's alone", r.agent.runs()-runs)
		}
		if typ := gjson.Get(reply, "output.0.type").Str; typ != "message" {
			t.Errorf("output starts with %s: %.200s", typ, reply)
		}
	}

	// Crossed by the history: it is summarised, the turn gets the summary
	// and its own message.
	runs := r.agent.runs()
	reply := r.ok(t, `{"model":"service","input":[`+user(long)+`,{"type":"message","role":"assistant","content":"noted"},`+user("what now?")+`]`+cm+`}`)
	if r.agent.runs() != runs+2 {
		t.Fatalf("%d runs; want the compaction's and the turn's", r.agent.runs()-runs)
	}
	want := []string{"system:" + runner.CompactedContextPrefix + "summary of 2 messages", "user:what now?"}
	if got := roles(r.agent.last()); !slices.Equal(got, want) {
		t.Errorf("the turn's agent got %q, want %q", got, want)
	}
	out := gjson.Get(reply, "output").Array()
	if len(out) != 2 || out[0].Get("type").Str != "compaction" {
		t.Fatalf("output: want the compaction item, then the answer: %s", reply)
	}
	cmpRun := contract.RunPrefix + strings.TrimPrefix(out[0].Get("id").Str, "cmp_")
	cmp := r.runs.Get(t, cmpRun)
	turnRun := r.runs.Get(t, gjson.Get(reply, "metadata.service.run_id").Str)
	if cmp.Status != runner.StatusCompleted || cmp.Endpoint != contract.EndpointCompact || cmp.Usage == nil {
		t.Fatalf("the compaction run: %+v", cmp)
	}
	if cmp.SessionID != turnRun.SessionID {
		t.Errorf("the compaction ran in session %s, the turn in %s", cmp.SessionID, turnRun.SessionID)
	}
	if got, want := gjson.Get(reply, "usage.input_tokens").Int(), int64(cmp.Usage.InputTokens+turnRun.Usage.InputTokens); got != want {
		t.Errorf("usage.input_tokens %d, want the compaction's and the turn's together, %d", got, want)
	}
}

// TestRemember: the connection a turn came on remembers it through the
// turn's commit, with the Response the client got and the run's session
// and thread, once the run completed; a failed turn is not remembered.
func TestRemember(t *testing.T) {
	r := newRoom(t)
	var got []string
	tn := &turn.Turn{Remember: func(run runner.Run, object []byte) {
		got = append(got, run.SessionID+" "+string(object))
	}}
	code, reply := r.postTurn(t, t.Context(), `{"model":"service","store":false,"input":"capital of France?"}`, tn)
	if code != 200 {
		t.Fatalf("%d %s", code, reply)
	}
	run := r.runs.Get(t, gjson.Get(reply, "metadata.service.run_id").Str)
	if want := []string{run.SessionID + " " + reply}; !slices.Equal(got, want) {
		t.Errorf("remembered %q, want the Response the client got %q", got, want)
	}

	got = nil
	r.agent.mu.Lock()
	r.agent.fail = errors.New("upstream down")
	r.agent.mu.Unlock()
	if code, _ := r.postTurn(t, t.Context(), `{"model":"service","store":false,"input":"and of Italy?"}`, &turn.Turn{Remember: tn.Remember}); code == 200 || got != nil {
		t.Errorf("a failed turn: %d, remembered %q", code, got)
	}
}

// TestCommitRacedDuplicateID: two turns of one conversation send the
// same new item id at once. Both pass the conversation stage's check (the
// conversation does not hold it yet); the first to commit appends it and
// the other meets the store's unique index: it is refused as the check
// refuses a held id (400 naming input), not answered 5xx, and appends
// nothing.
func TestCommitRacedDuplicateID(t *testing.T) {
	r := newRoom(t)
	conv := r.conversation(t, user("hello"))
	gate := make(chan struct{})
	r.agent.mu.Lock()
	r.agent.gate = gate
	r.agent.mu.Unlock()
	body := `{"model":"service","conversation":"` + conv + `","input":[{"type":"message","id":"msg_mine","role":"user","content":"hi"}]}`
	type reply struct {
		code int
		body string
	}
	replies := make(chan reply, 2)
	for range 2 {
		go func() {
			code, b := r.post(t, t.Context(), body)
			replies <- reply{code, b}
		}()
	}
	for r.agent.runs() < 2 { // both are past the check, their agents waiting
		select {
		case rp := <-replies:
			t.Fatalf("a turn answered before both ran: %d %s", rp.code, rp.body)
		case <-time.After(time.Millisecond):
		}
	}
	close(gate)
	var codes []int
	for range 2 {
		rp := <-replies
		codes = append(codes, rp.code)
		if rp.code == 400 {
			e := gjson.Get(rp.body, "error")
			if e.Get("param").Str != "input" || e.Get("code").Str != "invalid_body" || !strings.Contains(e.Get("message").Str, "msg_mine") {
				t.Errorf("the refused turn answered %s", rp.body)
			}
		}
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []int{200, 400}) {
		t.Fatalf("the two turns answered %v, want one 200 and one 400", codes)
	}
	want := []string{"message:user:hello", "message:user:hi", "message:assistant:Paris"}
	if got := r.items(t, conv); !slices.Equal(got, want) {
		t.Errorf("the conversation holds %q, want %q (the refused turn appended nothing)", got, want)
	}
}

// TestConcurrentFirstTurns: the first turns of a new conversation, sent
// at once, all run (the first to start opens its session; the others join
// it), and each appends its input and answer. The others were 500s.
func TestConcurrentFirstTurns(t *testing.T) {
	r := newRoom(t)
	conv := r.conversation(t, user("hello"))
	const n = 4
	codes := make(chan string, n)
	for i := range n {
		go func() {
			code, b := r.post(t, t.Context(), fmt.Sprintf(`{"model":"service","conversation":%q,"input":"turn %d"}`, conv, i))
			codes <- fmt.Sprintf("%d %.120s", code, b)
		}()
	}
	for range n {
		if c := <-codes; !strings.HasPrefix(c, "200 ") {
			t.Errorf("a first turn answered %s", c)
		}
	}
	if got := r.items(t, conv); len(got) != 1+2*n {
		t.Errorf("the conversation holds %d items, want %d: %q", len(got), 1+2*n, got)
	}
}
