package conversation

import (
	"encoding/json"
	"strconv"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/runner"
)

// A conversation's items are kept as OpenAI Responses items: what a
// client adds (through the Conversations API or as a response's input) is
// normalised once, on the way in, to the shape OpenAI lists it in, so a
// listing is the stored bytes. An id the client chose is kept when it is
// well-formed (contract.IsItemID, the rule of item references) and
// refused otherwise.

// NewItems normalises the items a client adds (OpenAI's
// input item shapes) to the items a conversation lists: every item gets a
// type, an id (the client's unless taken, else a new one) and, where
// OpenAI's item has one, a status; a message's string content becomes
// one input_text (output_text for the assistant) part. taken (nil: none
// is) reports an id already in the conversation.
func NewItems(raw []json.RawMessage, field string, taken func(string) (bool, error)) ([]runner.ConversationItem, error) {
	out := make([]runner.ConversationItem, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		param := field + "[" + strconv.Itoa(i) + "]"
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil || m == nil {
			return nil, apierr.InvalidBody(param, "an item must be a JSON object")
		}
		prefix, err := normaliseItem(m, param)
		if err != nil {
			return nil, err
		}
		id, isString := m["id"].(string)
		if v, ok := m["id"]; ok && v != nil && (!isString || id != "" && !contract.IsItemID(id)) {
			return nil, apierr.InvalidBody(param+".id", "an item id is 1 to %d letters, digits, '-' or '_'", contract.MaxIDLength)
		}
		if id != "" && !seen[id] && taken != nil {
			t, err := taken(id)
			if err != nil {
				return nil, err
			}
			seen[id] = t
		}
		if id == "" || seen[id] {
			id = runner.NewID(prefix)
		}
		seen[id] = true
		m["id"] = id
		b, err := json.Marshal(m)
		if err != nil {
			return nil, apierr.InvalidBody(param, "the item cannot be stored: %v", err)
		}
		out = append(out, runner.ConversationItem{ID: id, Data: b})
	}
	return out, nil
}

// normaliseItem fills in an item's type, status and message content in
// place and returns the prefix of the id it gets when it has none.
func normaliseItem(m map[string]any, param string) (string, error) {
	typ, _ := m["type"].(string)
	if typ == "" {
		if _, ok := m["role"]; !ok {
			return "", apierr.InvalidBody(param+".type", "an item needs a type (or a role, for a message)")
		}
		typ = "message"
		m["type"] = typ
	}
	switch typ {
	case "message":
		role, _ := m["role"].(string)
		switch role {
		case "assistant", "user", "system", "developer":
		default:
			return "", apierr.InvalidBody(param+".role", "role must be user, assistant, system or developer")
		}
		switch c := m["content"].(type) {
		case string:
			// One text part, as every item of runedge's is written
			// (internal/respjson): output_text for the assistant.
			m["content"] = []any{json.RawMessage(respjson.AppendTextPart(nil, role, c))}
		case []any:
		default:
			return "", apierr.InvalidBody(param+".content", "content must be a string or an array of content parts")
		}
		setDefault(m, "status", "completed")
		return contract.MessagePrefix, nil
	case "function_call":
		for _, k := range []string{"call_id", "name", "arguments"} {
			if _, ok := m[k].(string); !ok {
				return "", apierr.InvalidBody(param+"."+k, "a function_call needs %s (a string)", k)
			}
		}
		setDefault(m, "status", "completed")
		return contract.CallPrefix, nil
	case "function_call_output":
		if _, ok := m["call_id"].(string); !ok {
			return "", apierr.InvalidBody(param+".call_id", "a function_call_output needs call_id (a string)")
		}
		if _, ok := m["output"]; !ok {
			return "", apierr.InvalidBody(param+".output", "a function_call_output needs output")
		}
		setDefault(m, "status", "completed")
		return "fco_", nil
	case "item_reference":
		e := apierr.New(apierr.CodeUnsupportedParameter, "item_reference items cannot be added to a conversation; add the item itself")
		e.Param = param + ".type"
		return "", e
	}
	return "item_", nil
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok || m[k] == nil {
		m[k] = v
	}
}
