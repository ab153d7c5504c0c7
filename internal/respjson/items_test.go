package respjson

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner/native"
	"github.com/runedge/runedge/runner/schema"
)

// The descriptions the items are held to: the Open Responses
// specification's shapes and the subset of OpenAI's OpenAPI description,
// both restated as JSON Schema beside host/server's wire tests (one copy;
// see their $comment).
const (
	openResponsesFile = "../../host/server/testdata/openresponses/responses.json"
	openAIResponses   = "../../host/server/testdata/openapi/responses.json"
	openAITools       = "../../host/server/testdata/openapi/tools.json"
	openAICompact     = "../../host/server/testdata/openapi/compact.json"
	openAIConvs       = "../../host/server/testdata/openapi/conversations.json"
)

// def compiles definition name of file.
func def(t *testing.T, file, name string) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["$ref"] = "#/$defs/" + name
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(b)
	if err != nil {
		t.Fatalf("%s %s: %v", file, name, err)
	}
	return s
}

type check struct{ file, def string }

var (
	orItem       = check{openResponsesFile, "ItemField"}
	oaOutputItem = check{openAIResponses, "OutputItem"}
	oaConvItem   = check{openAIConvs, "ConversationItem"}
)

// Every item kind the writer builds is valid against the Open Responses
// description and against OpenAI's at once. Kinds the restated Open
// Responses description has no member for (custom_tool_call,
// item_reference: its ItemField lists message, function_call,
// function_call_output, reasoning and compaction) are held to OpenAI's.
func TestItemsValidateAgainstBothDescriptions(t *testing.T) {
	for _, c := range []struct {
		name   string
		item   []byte
		checks []check
	}{
		{"output message", AppendOutputMessage(nil, "msg_1", StatusCompleted, "Hello \"there\"\n"),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"incomplete output message", AppendOutputMessage(nil, "msg_1", StatusIncomplete, "Hel"),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"fragments: in progress", append(append([]byte(ItemHead), `"msg_1"`...), MessageInProgress...),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"fragments: completed", append(append(append(append([]byte(ItemHead), `"msg_1"`...), MessageCompleted...), `"hi"`...), MessageTail...),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"listed user message", AppendMessage(nil, Message{ID: "msg_2", Role: "user", Parts: []Part{
			{Text: "look"}, {Kind: PartImage, URL: "https://example.com/a.png"}, {Kind: PartFile, URL: "https://example.com/a.pdf", Filename: "a.pdf"}}}),
			[]check{orItem, oaConvItem}},
		{"listed assistant message with phase", AppendMessage(nil, Message{ID: "msg_3", Role: "assistant", Phase: "final_answer", Parts: []Part{{Text: "done"}}}),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"listed developer message", AppendMessage(nil, Message{ID: "msg_4", Role: "developer", Parts: []Part{{Text: "be brief"}}}),
			[]check{orItem, oaConvItem}},
		{"function_call", AppendCallItem(nil, CallItem{ItemID: "fc_1_0", CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Status: StatusCompleted}),
			[]check{orItem, {openAITools, "FunctionToolCall"}, oaOutputItem, oaConvItem}},
		{"function_call in progress", AppendCallItem(nil, CallItem{ItemID: "fc_1_0", CallID: "call_1", Name: "get_weather", Status: StatusInProgress}),
			[]check{orItem, {openAITools, "FunctionToolCall"}, oaOutputItem, oaConvItem}},
		{"namespaced function_call", AppendCallItem(nil, CallItem{ItemID: "fc_1_1", CallID: "call_2", Namespace: "fs", Name: "read", Arguments: `{}`, Status: StatusCompleted}),
			[]check{orItem, {openAITools, "FunctionToolCall"}, oaOutputItem, oaConvItem}},
		{"custom_tool_call", AppendCallItem(nil, CallItem{ItemID: "fc_1_2", CallID: "call_3", Name: "apply_patch", Arguments: `{"input":"*** Begin"}`, Status: StatusCompleted, Custom: true}),
			[]check{oaOutputItem, oaConvItem}},
		{"reasoning from an upstream", AppendReasoningItem(nil, "rs_1", "Six times seven."),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"reasoning without summary", AppendReasoningItem(nil, "rs_1", ""),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"sealed reasoning from an upstream", AppendSealedReasoningItem(nil, "rs_1", "Six times seven.", "rc1.k.AAAA"),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"stored reasoning", AppendReasoning(nil, "rs_2", Reasoning{Summary: []string{"a", "b"}, Content: []string{"c"}, EncryptedContent: "gAAA"}),
			[]check{orItem, oaOutputItem, oaConvItem}},
		{"compaction", AppendCompactionItem(nil, "cmp_1", "rc1.k.AAAA"),
			[]check{orItem, {openAICompact, "ItemField"}, oaOutputItem, oaConvItem}},
		{"item_reference", AppendItemReference(nil, "msg_9"),
			[]check{oaConvItem}},
	} {
		if !json.Valid(c.item) {
			t.Errorf("%s: not JSON: %s", c.name, c.item)
			continue
		}
		for _, k := range c.checks {
			if err := def(t, k.file, k.def).Validate(c.item); err != nil {
				t.Errorf("%s against %s %s: %v\n%s", c.name, k.file, k.def, err, c.item)
			}
		}
	}
}

// A Response the writer frames (head, items, tail, metadata, end) and its
// usage are valid against both descriptions, in progress and completed,
// incomplete, with defaults and with every setting echoed.
func TestResponseValidatesAgainstBothDescriptions(t *testing.T) {
	or, oa := def(t, openResponsesFile, "ResponseResource"), def(t, openAIResponses, "Response")
	usage := &native.Usage{InputTokens: 5, OutputTokens: 7, TotalTokens: 12, CachedTokens: 2, CacheWriteTokens: 1, ReasoningTokens: 3}
	var every Echo
	every[contract.EchoInstructions] = `"be brief"`
	every[contract.EchoTemperature] = `0.5`
	every[contract.EchoPresencePenalty] = `0.1`
	every[contract.EchoServiceTier] = `"flex"`
	every[contract.EchoPromptCacheKey] = `"k"`
	every[contract.EchoMaxToolCalls] = `3`
	for _, c := range []struct {
		name string
		r    Response
		u    *native.Usage
		item []byte
	}{
		{"in progress", Response{ID: "resp_1", Model: "service", Status: StatusInProgress, CreatedAt: 1}, nil, nil},
		{"completed", Response{ID: "resp_1", Model: "service", Status: StatusCompleted, CreatedAt: 1, CompletedAt: 2, Echo: every},
			usage, AppendOutputMessage(nil, "msg_1", StatusCompleted, "hi")},
		{"incomplete", Response{ID: "resp_1", Model: "service", Status: StatusIncomplete, IncompleteReason: "max_output_tokens", CreatedAt: 1, CompletedAt: 2},
			usage, AppendOutputMessage(nil, "msg_1", StatusIncomplete, "h")},
		{"conversation", Response{ID: "resp_1", Model: "service", Status: StatusCompleted, CreatedAt: 1, CompletedAt: 2, Conversation: `{"id":"conv_1"}`},
			&native.Usage{}, AppendCompactionItem(nil, "cmp_1", "x")},
	} {
		b := AppendResponseHead(nil, &c.r)
		b = append(b, c.item...)
		b = AppendResponseTail(b, &c.r, `"hi"`, c.u)
		b = append(b, `{"k":"v"}`...)
		b = append(b, ResponseEnd...)
		for name, s := range map[string]*schema.Schema{"Open Responses": or, "OpenAI": oa} {
			if err := s.Validate(b); err != nil {
				t.Errorf("%s against %s: %v\n%s", c.name, name, err, b)
			}
		}
	}
	u := AppendUsage(nil, *usage)
	for _, k := range []check{{openResponsesFile, "Usage"}, {openAICompact, "ResponseUsage"}} {
		if err := def(t, k.file, k.def).Validate(u); err != nil {
			t.Errorf("usage against %s %s: %v\n%s", k.file, k.def, err, u)
		}
	}
}

// The writers allocate nothing beyond dst.
func TestItemWritersDoNotAllocate(t *testing.T) {
	dst := make([]byte, 0, 4096)
	r := Response{ID: "resp_1", Model: "service", Status: StatusCompleted, CreatedAt: 1, CompletedAt: 2}
	u := native.Usage{InputTokens: 1}
	n := testing.AllocsPerRun(100, func() {
		b := AppendOutputMessage(dst[:0], "msg_1", StatusCompleted, "hello")
		b = AppendCallItem(b, CallItem{ItemID: "fc_1_0", CallID: "c", Name: "f", Arguments: "{}", Status: StatusCompleted})
		b = AppendReasoningItem(b, "rs_1", "s")
		b = AppendCompactionItem(b, "cmp_1", "x")
		b = AppendResponseHead(b, &r)
		_ = AppendResponseTail(b, &r, `""`, &u)
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}
