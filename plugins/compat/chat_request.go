package compat

import (
	"strings"

	"github.com/runedge/runedge/plugins/guestjson"
)

// chatBody holds the chat.completions fields the mapping reads, gathered in
// one pass over the body so a large body is scanned once.
type chatBody struct {
	messages, responseFormat, stream, streamOptions value
	maxTokens, maxCompletionTokens, n               value
	tools, toolChoice, parallelToolCalls, functions value
	// other is what checkChatField found wrong with the first of the
	// fields the mapping does not carry (chat_fields.go).
	other error
}

// mapChatRequest maps a chat.completions body to the native request and the
// echo {"include_usage"} that the streaming reply needs later.
func mapChatRequest(body value) ([]byte, error) {
	b, n, includeUsage, err := readChatBody(body, nil)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b.messages)+len(n.format.schema)+128)
	out = append(out, `{"request":{"input":[`...)
	out, count, err := appendChatMessages(out, b.messages)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, invalid("messages", "messages must contain at least one message with content")
	}
	return appendChatRest(out, &n, includeUsage), nil
}

// appendChatRest closes the input array and appends the request's
// options and the echo.
func appendChatRest(out []byte, n *native, includeUsage bool) []byte {
	out = append(out, ']')
	out = n.appendOptions(out)
	if includeUsage {
		return append(out, `,"echo":{"include_usage":true}}`...)
	}
	return append(out, `,"echo":{"include_usage":false}}`...)
}

// readChatBody reads and checks everything in a chat.completions body but
// its messages, which it checks is an array.
func readChatBody(body value, ends *guestjson.StringEnds) (b chatBody, n native, includeUsage bool, err error) {
	body.MembersEnds(ends, func(k, v value) bool {
		switch {
		case k.Is("messages"):
			b.messages = v
		case k.Is("response_format"):
			b.responseFormat = v
		case k.Is("stream"):
			b.stream = v
		case k.Is("stream_options"):
			b.streamOptions = v
		case k.Is("max_tokens"):
			b.maxTokens = v
		case k.Is("max_completion_tokens"):
			b.maxCompletionTokens = v
		case k.Is("n"):
			b.n = v
		case k.Is("tools"):
			b.tools = v
		case k.Is("tool_choice"):
			b.toolChoice = v
		case k.Is("parallel_tool_calls"):
			b.parallelToolCalls = v
		case k.Is("functions"), k.Is("function_call"):
			if !v.IsNull() {
				b.functions = k
			}
		default:
			if b.other == nil {
				b.other = checkChatField(k, v)
			}
		}
		return true
	})
	if b.other != nil {
		return b, n, false, b.other
	}
	if err := b.readOptions(&n, &includeUsage); err != nil {
		return b, n, false, err
	}
	if b.messages == "" {
		return b, n, false, invalid("messages", "messages is required")
	}
	if !b.messages.IsArray() {
		return b, n, false, invalid("messages", "messages must be an array of message objects")
	}
	return b, n, includeUsage, nil
}

// readOptions checks everything but messages and fills n and includeUsage.
func (b *chatBody) readOptions(n *native, includeUsage *bool) error {
	var err error
	if n.format, err = readFormat(b.responseFormat, "response_format", "response_format.json_schema"); err != nil {
		return err
	}
	if n.stream, err = optBool(b.stream, "stream"); err != nil {
		return err
	}
	// stream_options is accepted with stream false (some clients always send
	// it) and then has no effect.
	if !b.streamOptions.IsNull() {
		if !b.streamOptions.IsObject() {
			return invalid("stream_options", "stream_options must be an object")
		}
		usage, err := optBool(b.streamOptions.Get("include_usage"), "stream_options.include_usage")
		if err != nil {
			return err
		}
		*includeUsage = usage && n.stream
	}
	// max_completion_tokens replaced max_tokens; when both are sent the newer
	// name wins, as it does upstream.
	if n.maxOutput, err = optPositiveInt(b.maxTokens, "max_tokens"); err != nil {
		return err
	}
	limit, err := optPositiveInt(b.maxCompletionTokens, "max_completion_tokens")
	if err != nil {
		return err
	}
	if limit > 0 {
		n.maxOutput = limit
	}
	if !b.n.IsNull() {
		f, ok := b.n.Num()
		if !ok {
			return invalid("n", "n must be a number")
		}
		if f != 1 {
			// More choices change the answer: refused by name, as on
			// Responses.
			return unsupported("n", "n must be 1: this service returns exactly one choice")
		}
	}
	if b.functions != "" {
		return unsupported(b.functions.Str(), "functions and function_call are deprecated and not supported: use tools and tool_choice")
	}
	n.tools, err = readTools(b.tools, b.toolChoice, b.parallelToolCalls, true)
	return err
}

// appendChatMessages appends the native input messages and reports how many
// it wrote.
func appendChatMessages(dst []byte, messages value) ([]byte, int, error) {
	var err error
	var calls []value // ids of the tool calls of the assistant turns so far
	i, count := 0, 0
	messages.Elements(func(m value) bool {
		var wrote bool
		dst, wrote, err = appendChatMessage(dst, m, i, count > 0, &calls)
		if wrote {
			count++
		}
		i++
		return err == nil
	})
	return dst, count, err
}

// appendChatMessage appends message i, preceded by a comma when it is not the
// first. An assistant message carries its tool_calls (their ids are added
// to calls); one with neither content nor calls is skipped, as it says
// nothing. A tool message carries the tool_call_id its content answers,
// which must be one of calls: a result that answers no call is refused
// here, as OpenAI refuses it, rather than by the upstream model, which
// would make the client's mistake a 502.
func appendChatMessage(dst []byte, m value, i int, comma bool, calls *[]value) ([]byte, bool, error) {
	if !m.IsObject() {
		return dst, false, invalid(indexed("messages", i), "each message must be an object with a role and content")
	}
	var role, content, toolCalls, toolCallID value
	m.Members(func(k, v value) bool {
		switch {
		case k.Is("role"):
			role = v
		case k.Is("content"):
			content = v
		case k.Is("tool_calls"):
			toolCalls = v
		case k.Is("tool_call_id"):
			toolCallID = v
		}
		return true
	})
	native, ok := chatRole(role)
	if !ok {
		return dst, false, invalid(indexed("messages", i)+".role",
			"role must be one of system, developer, user, assistant or tool")
	}
	hasCalls := native == "assistant" && toolCalls.IsArray() && toolCalls != "[]"
	if native == "assistant" && content.IsNull() && !hasCalls {
		return dst, false, nil
	}
	if native == "tool" && (!toolCallID.IsString() || toolCallID == `""`) {
		return dst, false, invalid(indexed("messages", i)+".tool_call_id", "a tool message needs the tool_call_id of the call it answers")
	}
	if native == "tool" && !answers(*calls, toolCallID) {
		return dst, false, invalid(indexed("messages", i)+".tool_call_id",
			"a tool message must answer a tool call of an earlier assistant message (its tool_calls[].id)")
	}
	if !toolCalls.IsNull() && !toolCalls.IsArray() {
		return dst, false, invalid(indexed("messages", i)+".tool_calls", "tool_calls must be an array")
	}
	if comma {
		dst = append(dst, ',')
	}
	dst, err := appendMessageOpen(dst, native, content, chatParts, "messages", i)
	if err != nil {
		return dst, false, err
	}
	switch {
	case hasCalls:
		dst, err = appendChatCalls(dst, toolCalls, i, calls)
	case native == "tool":
		dst = append(dst, `,"tool_call_id":"`...)
		dst = guestjson.AppendStringValue(dst, toolCallID)
		dst = append(dst, '"')
	}
	return append(dst, '}'), err == nil, err
}

// appendChatCalls appends the native tool_calls of assistant message i and
// adds their ids to ids.
func appendChatCalls(dst []byte, calls value, i int, ids *[]value) ([]byte, error) {
	dst = append(dst, `,"tool_calls":[`...)
	var err error
	j := 0
	calls.Elements(func(c value) bool {
		where := indexed(indexed("messages", i)+".tool_calls", j)
		if !c.IsObject() || !c.Get("function").IsObject() {
			err = invalid(where, "each tool call must be an object with an id and a function")
			return false
		}
		if t := c.Get("type"); !t.IsNull() && !t.Is("function") {
			err = unsupported(where+".type", "only function tool calls are supported")
			return false
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		fn, id := c.Get("function"), c.Get("id")
		*ids = append(*ids, id)
		dst, err = appendNativeCall(dst, id, fn.Get("name"), fn.Get("arguments"),
			where+".id", where+".function.name", where+".function.arguments")
		j++
		return err == nil
	})
	return append(dst, ']'), err
}

// chatRole maps a chat role to the native one.
func chatRole(r value) (string, bool) {
	// The role as written first (roleAsWritten), then read.
	if role, ok, known := roleAsWritten(r); known {
		return role, ok
	}
	switch {
	case r.Is("system"):
		return "system", true
	case r.Is("developer"):
		return "developer", true
	case r.Is("user"):
		return "user", true
	case r.Is("assistant"):
		return "assistant", true
	case r.Is("tool"):
		return "tool", true
	}
	return "", false
}

func isChatText(typ value) bool { return typ.Is("text") }

// answers reports whether id (a tool message's tool_call_id) is one of the
// call ids in calls.
func answers(calls []value, id value) bool {
	for _, c := range calls {
		if c == id || c.IsString() && c.Str() == id.Str() {
			return true
		}
	}
	return false
}

// roleAsWritten is chatRole for a role with no escape, compared as
// written (one comparison where each r.Is read the role again: the
// agent history's 400 roles, MapRequestDecoded). known is false for a
// string with a backslash, which only reading can tell.
func roleAsWritten(r value) (role string, ok, known bool) {
	switch r.Escaped() { // "" when r is not a string
	case "system":
		return "system", true, true
	case "developer":
		return "developer", true, true
	case "user":
		return "user", true, true
	case "assistant":
		return "assistant", true, true
	case "tool":
		return "tool", true, true
	}
	return "", false, !r.IsString() || strings.IndexByte(r.Escaped(), '\\') < 0
}
