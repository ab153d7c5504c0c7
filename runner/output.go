package runner

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/contract"
)

// A stored response keeps as its output the items of the Response the
// client received (the object its translate stage set, after the result
// plugin), not the native result: what previous_response_id replays, what
// an item_reference resolves to and what is listed is what the client saw,
// with the items' true types and ids. The output message, with the calls
// of the Response as its tool calls (fc_X_i names the i-th,
// contract.CallID), comes first; a reasoning item follows as an item of its
// own. A compaction item is the client's to carry and is not kept.

// outputItems returns the output items of run runID, which ended with
// result res and whose client got object: the object's output items as
// native messages, or, when there is no Response object to read (no object,
// or one of another kind), the result itself.
func outputItems(runID string, object []byte, res *Result, text string) []Item {
	msgID := contract.MessageID(runID)
	if items, ok := objectItems(msgID, runID, object, res); ok {
		return items
	}
	m := Message{Role: "assistant", Content: text}
	if res != nil {
		// text of a run that ended in calls is the calls' JSON
		// (toolcalls.go); the message has the text.
		m.Content, m.ToolCalls = res.Text, res.ToolCalls
	}
	return []Item{{ID: msgID, RunID: runID, Output: true, Message: m}}
}

// objectItems reads the output of a Response object; ok is false when
// object is not one (none, a chat completion, a compaction reply). A result
// plugin's Response is read by its output array, whatever else it wrote.
func objectItems(msgID, runID string, object []byte, res *Result) ([]Item, bool) {
	if len(object) == 0 {
		return nil, false
	}
	out := gjson.GetBytes(object, "output")
	if !out.IsArray() || gjson.GetBytes(object, "object").Str == "response.compaction" {
		return nil, false
	}
	msg := Item{ID: msgID, RunID: runID, Output: true, Message: Message{Role: "assistant"}}
	var rest []Item
	var text strings.Builder
	out.ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").Str {
		case "message":
			if id := it.Get("id").Str; id != "" {
				msg.ID = id
			}
			msg.Message.Phase = it.Get("phase").Str
			it.Get("content").ForEach(func(_, p gjson.Result) bool {
				if p.Get("type").Str == "output_text" {
					text.WriteString(p.Get("text").Str)
				}
				return true
			})
		case "function_call":
			msg.Message.ToolCalls = append(msg.Message.ToolCalls, ToolCall{ID: it.Get("call_id").Str,
				Name: nativeName(it, res), Arguments: it.Get("arguments").Str})
		case "custom_tool_call":
			msg.Message.ToolCalls = append(msg.Message.ToolCalls, ToolCall{ID: it.Get("call_id").Str,
				Name: nativeName(it, res), Arguments: it.Get("input").Str, Custom: true})
		case "reasoning":
			r := &Reasoning{ID: it.Get("id").Str, EncryptedContent: it.Get("encrypted_content").Str}
			it.Get("summary.#.text").ForEach(func(_, s gjson.Result) bool {
				r.Summary = append(r.Summary, s.Str)
				return true
			})
			it.Get("content.#.text").ForEach(func(_, s gjson.Result) bool {
				r.Content = append(r.Content, s.Str)
				return true
			})
			id := r.ID
			if id == "" {
				id = contract.ReasoningID(msgID)
			}
			rest = append(rest, Item{ID: id, RunID: runID, Output: true, Message: Message{Role: RoleReasoning, Reasoning: r}})
		}
		return true
	})
	msg.Message.Content = text.String()
	return append([]Item{msg}, rest...), true
}

// nativeName is the name the agent knows a call item's function by: a
// namespaced function's native name is the mapping's (qualified when
// another tool shares its name), which the result's call of the same id
// has; any other is the item's name.
func nativeName(it gjson.Result, res *Result) string {
	name := it.Get("name").Str
	if !it.Get("namespace").Exists() || res == nil {
		return name
	}
	id := it.Get("call_id").Str
	for _, c := range res.ToolCalls {
		if c.ID == id {
			return c.Name
		}
	}
	return name
}
