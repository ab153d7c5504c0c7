package compat

import (
	"strconv"
	"strings"
)

// Tool calls in replies. The native result carries them as
// "tool_calls":[{"id","name","arguments"}…]; chat shows them as
// message.tool_calls, Responses as function_call output items after the
// message (if the model also said something).

// FunctionCallID is the id of the i-th function_call output item of the
// response whose message id is messageID: "fc_" and the message's random
// part, then the index. The host's stream framing and the result mapping
// both derive it, so the ids in the events and in the final Response agree.
func FunctionCallID(messageID string, i int) string {
	return "fc_" + strings.TrimPrefix(messageID, "msg_") + "_" + strconv.Itoa(i)
}

// hasCalls reports whether the result has tool calls.
func (r *resultInput) hasCalls() bool {
	return r.toolCalls.isArray() && r.toolCalls != "[]"
}

// eachCall calls fn with the id, name and arguments of every tool call.
func (r *resultInput) eachCall(fn func(i int, id, name, args value)) {
	i := 0
	r.toolCalls.elements(func(c value) bool {
		var id, name, args value
		c.members(func(k, v value) bool {
			switch {
			case k.is("id"):
				id = v
			case k.is("name"):
				name = v
			case k.is("arguments"):
				args = v
			}
			return true
		})
		fn(i, id, name, args)
		i++
		return true
	})
}

// appendChatToolCalls appends ,"tool_calls":[…] in the chat shape.
func (r *resultInput) appendChatToolCalls(dst []byte) []byte {
	dst = append(dst, `,"tool_calls":[`...)
	r.eachCall(func(i int, id, name, args value) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, id)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = appendString(dst, name)
		dst = append(dst, `,"arguments":`...)
		dst = appendString(dst, args)
		dst = append(dst, `}}`...)
	})
	return append(dst, ']')
}

// appendFunctionCallItems appends the function_call output items, each
// preceded by a comma when comma is set or it is not the first.
func (r *resultInput) appendFunctionCallItems(dst []byte, comma bool) []byte {
	msgID := r.messageID.str()
	r.eachCall(func(i int, id, name, args value) {
		if comma || i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendFunctionCallItem(dst, FunctionCallID(msgID, i), id.str(), name.str(), args.str(), "completed")
	})
	return dst
}

// AppendFunctionCallItem appends a function_call output item, as the
// Response's output and the stream's output_item events show it.
func AppendFunctionCallItem(dst []byte, itemID, callID, name, arguments, status string) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, itemID)
	dst = append(dst, `,"type":"function_call","status":`...)
	dst = AppendJSONString(dst, status)
	dst = append(dst, `,"call_id":`...)
	dst = AppendJSONString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = AppendJSONString(dst, name)
	dst = append(dst, `,"arguments":`...)
	dst = AppendJSONString(dst, arguments)
	return append(dst, '}')
}
