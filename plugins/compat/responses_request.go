package compat

import (
	"strconv"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/guestjson"
)

// responsesBody holds the responses fields the mapping reads or echoes,
// gathered in one pass over the body.
type responsesBody struct {
	input, instructions, text, maxOutputTokens, stream value
	// refused holds the first meaning-changing field that is not
	// supported, with its name.
	refused, refusedName value
	echoed               responsesEcho
}

// unsupportedFields change what the request means and are not
// implemented: they are refused (400 unsupported_parameter), never
// dropped. The README lists them beside the fields that are safely
// ignored.
func (b *responsesBody) refuse(k, v value) {
	if b.refused != "" {
		return
	}
	switch {
	case k.Is("conversation"), k.Is("prompt"),
		// The API's newer settings runedge does not implement: a
		// moderation model on input and output, prompt cache retention
		// and options, access programs.
		k.Is("moderation"), k.Is("prompt_cache_retention"), k.Is("prompt_cache_options"), k.Is("access_programs"):
		if v.IsNull() {
			return
		}
	case k.Is("truncation"):
		// auto lets the service drop input that does not fit the model's
		// context window; runedge does not know that window, so it cannot.
		if !v.Is("auto") {
			return
		}
	case k.Is("n"):
		if f, ok := v.Num(); v.IsNull() || (ok && f == 1) {
			return
		}
	case k.Is("top_logprobs"):
		if f, ok := v.Num(); v.IsNull() || (ok && f == 0) {
			return
		}
	default:
		return
	}
	b.refused, b.refusedName = v, k
}

// mapResponsesRequest maps a responses body to the native request and the
// echo of request settings that the Response object must repeat.
func mapResponsesRequest(body value) ([]byte, error) {
	var b responsesBody
	n, err := readResponsesBody(body, &b, nil)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b.input)+2*len(b.instructions)+len(n.format.schema)+len(b.text)+len(b.echoed[contract.EchoTools])+512)
	out = append(out, `{"request":{"input":[`...)
	out, err = appendResponsesInput(out, b.input, n.tools.all)
	if err != nil {
		return nil, err
	}
	return appendResponsesRest(out, &b, &n), nil
}

// appendResponsesRest closes the input array and appends the request's
// options and the echo.
func appendResponsesRest(out []byte, b *responsesBody, n *native) []byte {
	out = append(out, ']')
	out = n.appendOptions(out)
	out = append(out, `,"echo":`...)
	out = b.echoed.appendTo(out, n.instructions, n.maxOutput, b.text)
	return append(out, '}')
}

// readResponsesBody reads and checks everything in a Responses body but
// its input, into b.
func readResponsesBody(body value, b *responsesBody, ends *guestjson.StringEnds) (native, error) {
	var n native
	e := &b.echoed
	body.MembersEnds(ends, func(k, v value) bool {
		switch {
		case k.Is("input"):
			b.input = v
		case k.Is("instructions"):
			b.instructions = v
		case k.Is("text"):
			b.text = v
		case k.Is("max_output_tokens"):
			b.maxOutputTokens = v
		case k.Is("stream"):
			b.stream = v
		default:
			b.refuse(k, v)
			e.collect(k, v)
		}
		return true
	})

	if b.refused != "" {
		name := b.refusedName.Str()
		return n, unsupported(name, name+" is not supported by this service")
	}
	if err := b.readOptions(&n); err != nil {
		return n, err
	}
	if err := e.check(); err != nil {
		return n, err
	}
	if err := e.readState(&n); err != nil {
		return n, err
	}
	var err error
	if n.tools, err = readTools(e[contract.EchoTools], e[contract.EchoToolChoice], e[contract.EchoParallelToolCalls], false); err != nil {
		return n, err
	}
	if err = e.readFields(&n); err != nil {
		return n, err
	}
	return n, nil
}

// readOptions checks everything but input and the echoed settings.
func (b *responsesBody) readOptions(n *native) error {
	if !b.instructions.IsNull() && !b.instructions.IsString() {
		return invalid("instructions", "instructions must be a string")
	}
	n.instructions = b.instructions
	if !b.text.IsNull() && !b.text.IsObject() {
		return invalid("text", "text must be an object")
	}
	var err error
	if n.format, err = readFormat(b.text.Get("format"), "text.format", "text.format"); err != nil {
		return err
	}
	if n.stream, err = optBool(b.stream, "stream"); err != nil {
		return err
	}
	n.maxOutput, err = optPositiveInt(b.maxOutputTokens, "max_output_tokens")
	return err
}

// appendResponsesInput appends the native messages for input: a string is
// one user message, an array holds message items. offered are the request's
// tool names (toolOptions.all): a replayed call of a namespaced function
// they qualify is given its qualified name, as the model was offered it.
func appendResponsesInput(dst []byte, input value, offered []string) ([]byte, error) {
	switch {
	case input.IsString():
		dst = append(dst, `{"role":"user","content":"`...)
		dst = guestjson.AppendStringValue(dst, input)
		return append(dst, `"}`...), nil
	case input == "":
		return dst, invalid("input", "input is required")
	case !input.IsArray():
		return dst, invalid("input", "input must be a string or an array of message items")
	}
	var err error
	i := 0
	inCalls := false // an assistant message of function calls is open
	input.Elements(func(item value) bool {
		dst, inCalls, err = appendInputItem(dst, item, i, inCalls, offered)
		i++
		return err == nil
	})
	if inCalls {
		dst = append(dst, "]}"...)
	}
	if err == nil && i == 0 {
		err = invalid("input", "input must contain at least one message")
	}
	return dst, err
}

// appendInputItem appends input item i: a message, a function_call (the
// model's call, replayed), a function_call_output (its result), or an
// item_reference to a stored item, which becomes a native message
// {"ref":"<id>","ref_index":i} that the runner resolves from the tenant's
// stored items before the agent starts.
// Consecutive function_call items become one native assistant message with
// several tool_calls, as a model that calls in parallel produced them;
// inCalls says whether such a message is open (and stays open, returned
// true, for the next item to extend). Reasoning and other item types have no
// meaning for this model and are refused rather than dropped.
func appendInputItem(dst []byte, item value, i int, inCalls bool, offered []string) ([]byte, bool, error) {
	if !item.IsObject() {
		return dst, inCalls, invalid(indexed("input", i), "each input item must be a message object with a role and content")
	}
	var typ, role, content, callID, name, args, output, id, enc, input, phase, ns value
	item.Members(func(k, v value) bool {
		switch {
		case k.Is("type"):
			typ = v
		case k.Is("role"):
			role = v
		case k.Is("content"):
			content = v
		case k.Is("call_id"):
			callID = v
		case k.Is("name"):
			name = v
		case k.Is("arguments"):
			args = v
		case k.Is("output"):
			output = v
		case k.Is("id"):
			id = v
		case k.Is("encrypted_content"):
			enc = v
		case k.Is("phase"):
			phase = v
		case k.Is("input"):
			input = v
		case k.Is("namespace"):
			ns = v
		}
		return true
	})
	where := indexed("input", i)
	if typ.Is("function_call") || typ.Is("custom_tool_call") {
		switch {
		case inCalls:
			dst = append(dst, ',')
		case i > 0:
			dst = append(dst, `,{"role":"assistant","content":"","tool_calls":[`...)
		default:
			dst = append(dst, `{"role":"assistant","content":"","tool_calls":[`...)
		}
		if ns.IsString() && name.IsString() && countName(offered, name.Str()) > 1 {
			if q := qualify(ns.Str(), name.Str()); validSchemaName(q) {
				name = value(`"` + q + `"`)
			}
		}
		if typ.Is("custom_tool_call") {
			dst, err := appendNativeCall(dst, callID, name, input, where+".call_id", where+".name", where+".input")
			return append(dst[:len(dst)-1], `,"custom":true}`...), true, err
		}
		dst, err := appendNativeCall(dst, callID, name, args, where+".call_id", where+".name", where+".arguments")
		return dst, true, err
	}
	if inCalls {
		dst = append(dst, "]}"...)
	}
	if i > 0 {
		dst = append(dst, ',')
	}
	if typ.Is("function_call_output") || typ.Is("custom_tool_call_output") {
		dst, err := appendCallOutput(dst, callID, output, where)
		return dst, false, err
	}
	if typ.Is("item_reference") {
		if !id.IsString() || id == `""` {
			return dst, false, invalid(where+".id", "an item_reference needs the string id of a stored item")
		}
		dst = append(dst, `{"role":"","content":"","ref":"`...)
		dst = guestjson.AppendStringValue(dst, id)
		dst = append(dst, `","ref_index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		return append(dst, '}'), false, nil
	}
	if typ.Is("reasoning") {
		dst, err := appendReasoning(dst, item, i, where)
		return dst, false, err
	}
	if dst, ok, err := appendCompactionItem(dst, typ, enc, i); ok {
		return dst, false, err
	}
	if !typ.IsNull() && !typ.Is("message") {
		return dst, false, invalid(where+".type", "input items are messages, reasoning, item_reference, function_call, custom_tool_call and their outputs, compaction and compaction_trigger")
	}
	dst, err := appendInputMessage(dst, role, content, phase, i)
	return dst, false, err
}

// appendCallOutput appends a function_call_output as a native tool
// message. Its output is a string, or a list of input_text parts.
func appendCallOutput(dst []byte, callID, output value, where string) ([]byte, error) {
	if !callID.IsString() || callID == `""` {
		return dst, invalid(where+".call_id", where+".call_id must be the call_id of the function_call it answers")
	}
	if !output.IsString() && !output.IsArray() {
		return dst, invalid(where+".output", where+".output must be a string")
	}
	dst, err := appendMessageOpen(dst, "tool", output, responsesParts, "input", 0)
	if err != nil {
		return dst, invalid(where+".output", where+".output must be a string or a list of input_text parts")
	}
	dst = append(dst, `,"tool_call_id":"`...)
	dst = guestjson.AppendStringValue(dst, callID)
	return append(dst, `"}`...), nil
}

// appendInputMessage appends message item i. An assistant message's phase
// (commentary, final_answer) is kept, so its stored item shows it.
func appendInputMessage(dst []byte, role, content, phase value, i int) ([]byte, error) {
	native, ok := responsesRole(role)
	if !ok {
		return dst, invalid(indexed("input", i)+".role", "role must be one of system, developer, user or assistant")
	}
	if phase.IsNull() {
		return appendMessage(dst, native, content, responsesParts, "input", i)
	}
	if !phase.IsString() {
		return dst, invalid(indexed("input", i)+".phase", "phase must be a string")
	}
	dst, err := appendMessageOpen(dst, native, content, responsesParts, "input", i)
	dst = append(dst, `,"phase":"`...)
	dst = guestjson.AppendStringValue(dst, phase)
	return append(dst, `"}`...), err
}

func responsesRole(r value) (string, bool) {
	// The role as written first (roleAsWritten), then read.
	if role, ok, known := roleAsWritten(r); known {
		if role == "tool" {
			return "", false
		}
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
	}
	return "", false
}

// isResponsesText accepts input_text (user side) and output_text (earlier
// assistant turns replayed by clients such as the Vercel AI SDK).
func isResponsesText(typ value) bool { return typ.Is("input_text") || typ.Is("output_text") }
