package compat

import (
	"strconv"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/guestjson"
)

// Replayed reasoning items. Clients that began a session on a reasoning
// model (Codex CLI, the Agents SDK) replay its reasoning items with the
// rest of the history; refusing them would refuse the whole history. They
// become native messages of role "reasoning" that the runner stores with
// the response and that providers leave out of what they send upstream
// (a chat completions upstream has no place for them):
//
//	{"role":"reasoning","content":"","reasoning":{"id","summary":[…],"content":[…],"encrypted_content"},"ref_index":i}
//
// ref_index (the item's index in the input, left out when 0) comes with an
// encrypted_content: the host opens what it sealed (filters/compaction),
// and names input[i].encrypted_content when it does not open.

// appendReasoning appends reasoning item item, input item i; where names
// it for errors.
func appendReasoning(dst []byte, item value, i int, where string) ([]byte, error) {
	id, enc := item.Get("id"), item.Get("encrypted_content")
	if !id.IsNull() && !id.IsString() {
		return dst, invalid(where+".id", "a reasoning item's id must be a string")
	}
	if !enc.IsNull() && !enc.IsString() {
		return dst, invalid(where+".encrypted_content", "encrypted_content must be a string")
	}
	dst = append(dst, `{"role":"reasoning","content":"","reasoning":{`...)
	comma := false
	if id.IsString() && id != `""` {
		dst = append(dst, `"id":"`...)
		dst = guestjson.AppendStringValue(dst, id)
		dst = append(dst, '"')
		comma = true
	}
	var err error
	for _, list := range [...]struct{ name, part string }{{"summary", "summary_text"}, {"content", "reasoning_text"}} {
		v := item.Get(list.name)
		if v.IsNull() || v == "[]" {
			continue
		}
		if comma {
			dst = append(dst, ',')
		}
		if dst, err = appendReasoningTexts(dst, v, list.name, list.part, where); err != nil {
			return dst, err
		}
		comma = true
	}
	if enc.IsString() && enc != `""` {
		if comma {
			dst = append(dst, ',')
		}
		dst = append(dst, `"encrypted_content":"`...)
		dst = guestjson.AppendStringValue(dst, enc)
		dst = append(dst, '"')
		if i > 0 {
			dst = append(dst, `},"ref_index":`...)
			dst = strconv.AppendInt(dst, int64(i), 10)
			return append(dst, '}'), nil
		}
	}
	return append(dst, "}}"...), nil
}

// appendReasoningTexts appends "name":[texts] from a list of {type:part,text}.
func appendReasoningTexts(dst []byte, list value, name, part, where string) ([]byte, error) {
	if !list.IsArray() {
		return dst, invalid(where+"."+name, where+"."+name+" must be a list of "+part+" parts")
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, `":[`...)
	var err error
	j := 0
	list.Elements(func(p value) bool {
		text := p.Get("text")
		if t := p.Get("type"); !p.IsObject() || !t.Is(part) || !text.IsString() {
			err = invalid(indexed(where+"."+name, j), "each "+name+" part must be {\"type\":\""+part+"\",\"text\":…}")
			return false
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = guestjson.AppendStringValue(dst, text)
		dst = append(dst, '"')
		j++
		return true
	})
	return append(dst, ']'), err
}

// appendReasoningItem appends the reasoning item of an answer whose
// upstream gave its reasoning, after the answer's other items (comma: one
// came before). It comes last so that the items streamed while the answer
// arrived keep their output_index (filters/translate sends its events when
// the answer is complete).
func (r *resultInput) appendReasoningItem(dst []byte, comma bool) []byte {
	if !r.Reasoning.IsString() || r.Reasoning == `""` {
		return dst
	}
	if comma {
		dst = append(dst, ',')
	}
	return respjson.AppendReasoningItem(dst, contract.ReasoningID(r.MessageID.Str()), r.Reasoning.Str())
}
