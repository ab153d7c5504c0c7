package compat

import (
	"github.com/runedge/runedge/plugins/abi"
)

// Tool calls in replies. The native result carries them as
// "tool_calls":[{"id","name","arguments"}…]; chat shows them as
// message.tool_calls, Responses as function_call output items after the
// message (if the model also said something).

// FunctionCallID is abi.FunctionCallID: the host's stream framing and the
// result mapping both derive it, so the ids in the events and in the final
// Response agree.
func FunctionCallID(messageID string, i int) string { return abi.FunctionCallID(messageID, i) }

// hasCalls reports whether the result has tool calls.
func (r *resultInput) hasCalls() bool { return r.HasToolCalls() }

// eachCall calls fn with the id, name and arguments of every tool call.
func (r *resultInput) eachCall(fn func(i int, id, name, args value)) { r.EachToolCall(fn) }

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
	msgID := r.MessageID.Str()
	r.eachCall(func(i int, id, name, args value) {
		if comma || i > 0 {
			dst = append(dst, ',')
		}
		dst = abi.AppendFunctionCallItem(dst, FunctionCallID(msgID, i), id.Str(), name.Str(), args.Str(), "completed")
	})
	return dst
}
