package compat

import (
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
)

// Tool calls in replies. The native result carries them as
// "tool_calls":[{"id","name","arguments"}…]; chat shows them as
// message.tool_calls, Responses as function_call output items after the
// message (if the model also said something).

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

// appendFunctionCallItems appends the output items of the calls, each
// preceded by a comma when comma is set or it is not the first: a
// function_call, with its namespace when the function was offered inside
// one, or a custom_tool_call when tools (the echo, as the client sent
// them) offered a custom tool of that name.
func (r *resultInput) appendFunctionCallItems(dst []byte, comma bool, tools value) []byte {
	msgID := r.MessageID.Str()
	r.eachCall(func(i int, id, name, args value) {
		if comma || i > 0 {
			dst = append(dst, ',')
		}
		ns, fn, custom := toolKind(tools, name)
		dst = respjson.AppendCallItem(dst, respjson.CallItem{ItemID: contract.CallID(msgID, i), CallID: id.Str(), Namespace: ns.Str(),
			Name: fn, Arguments: args.Str(), Status: "completed", Custom: custom})
	})
	return dst
}

// toolKind finds the tool a call names (by its native name) among the
// client's tools: the namespace it sits in (its JSON string, "" for
// none), the function's name as the client gave it, and whether it is a
// custom tool. A namespaced function whose name another tool shares was
// offered qualified (qualify), and is found by that name.
func toolKind(tools, name value) (ns value, fn string, custom bool) {
	n := name.Str()
	fn = n
	all := offeredNames(tools)
	tools.Elements(func(t value) bool {
		typ := t.Get("type")
		switch {
		case typ.Is("namespace"):
			t.Get("tools").Elements(func(it value) bool {
				inner := it.Get("name").Str()
				native := inner
				if countName(all, inner) > 1 {
					native = qualify(t.Get("name").Str(), inner)
				}
				if native == n {
					ns, fn, custom = t.Get("name"), inner, it.Get("type").Is("custom")
				}
				return ns == ""
			})
			return ns == ""
		case typ.Is("custom") && t.Get("name").Is(n):
			custom = true
			return false
		}
		return true
	})
	return ns, fn, custom
}
