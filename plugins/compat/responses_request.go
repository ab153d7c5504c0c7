package compat

import "github.com/tidwall/gjson"

// responsesBody holds the responses fields the mapping reads or echoes,
// gathered in one pass over the body.
type responsesBody struct {
	input, instructions, text, maxOutputTokens, stream gjson.Result
	echoed                                             responsesEcho
}

// mapResponsesRequest maps a responses body to the native request and the
// echo of request settings that the Response object must repeat.
func mapResponsesRequest(body gjson.Result) ([]byte, error) {
	var b responsesBody
	e := &b.echoed
	body.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input":
			b.input = v
		case "instructions":
			b.instructions = v
		case "text":
			b.text = v
		case "max_output_tokens":
			b.maxOutputTokens = v
		case "stream":
			b.stream = v
		case "metadata":
			e.metadata = v
		case "temperature":
			e.temperature = v
		case "top_p":
			e.topP = v
		case "tool_choice":
			e.toolChoice = v
		case "tools":
			e.tools = v
		case "parallel_tool_calls":
			e.parallelToolCalls = v
		case "store":
			e.store = v
		case "truncation":
			e.truncation = v
		case "user":
			e.user = v
		case "previous_response_id":
			e.previousResponseID = v
		}
		return true
	})

	var n native
	if err := b.readOptions(&n); err != nil {
		return nil, err
	}
	if err := e.check(); err != nil {
		return nil, err
	}

	out := make([]byte, 0, len(b.input.Raw)+len(b.instructions.Raw)*2+len(n.format.schema)+len(b.text.Raw)+len(e.tools.Raw)+512)
	out = append(out, `{"request":{"input":[`...)
	out, err := appendResponsesInput(out, b.input)
	if err != nil {
		return nil, err
	}
	out = append(out, ']')
	out = n.appendOptions(out)
	out = append(out, `,"echo":`...)
	out = e.appendTo(out, n.instructions, n.maxOutput, b.text)
	return append(out, '}'), nil
}

// readOptions checks everything but input and the echoed settings.
func (b *responsesBody) readOptions(n *native) error {
	switch b.instructions.Type {
	case gjson.Null, gjson.String:
		n.instructions = b.instructions
	default:
		return invalid("instructions", "instructions must be a string")
	}
	if b.text.Type != gjson.Null && !b.text.IsObject() {
		return invalid("text", "text must be an object")
	}
	var err error
	if n.format, err = readFormat(b.text.Get("format"), "text.format", false); err != nil {
		return err
	}
	if n.stream, err = optBool(b.stream, "stream"); err != nil {
		return err
	}
	n.maxOutput, err = optPositiveInt(b.maxOutputTokens, "max_output_tokens")
	return err
}

// appendResponsesInput appends the native messages for input: a string is
// one user message, an array holds message items.
func appendResponsesInput(dst []byte, input gjson.Result) ([]byte, error) {
	switch {
	case input.Type == gjson.String:
		dst = append(dst, `{"role":"user","content":"`...)
		dst = appendRawStringBody(dst, input.Raw, input.Str)
		return append(dst, `"}`...), nil
	case !input.Exists():
		return dst, invalid("input", "input is required")
	case !input.IsArray():
		return dst, invalid("input", "input must be a string or an array of message items")
	}
	var err error
	i := 0
	input.ForEach(func(_, item gjson.Result) bool {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, err = appendInputItem(dst, item, i)
		i++
		return err == nil
	})
	if err == nil && i == 0 {
		err = invalid("input", "input must contain at least one message")
	}
	return dst, err
}

// appendInputItem appends input item i, which must be a message: the native
// run has no tools, so function calls, their outputs, reasoning and item
// references have no meaning there and are refused rather than dropped.
func appendInputItem(dst []byte, item gjson.Result, i int) ([]byte, error) {
	if !item.IsObject() {
		return dst, invalid(indexed("input", i), "each input item must be a message object with a role and content")
	}
	var typ, role, content gjson.Result
	item.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "role":
			role = v
		case "content":
			content = v
		}
		return true
	})
	if typ.Type != gjson.Null && (typ.Type != gjson.String || typ.Str != "message") {
		return dst, invalid(indexed("input", i), "only message input items are supported")
	}
	native, ok := responsesRole(role)
	if !ok {
		return dst, invalid(indexed("input", i)+".role", "role must be one of system, developer, user or assistant")
	}
	return appendMessage(dst, native, content, isResponsesText, "input", i)
}

func responsesRole(r gjson.Result) (string, bool) {
	if r.Type != gjson.String {
		return "", false
	}
	switch r.Str {
	case "system":
		return "system", true
	case "developer":
		return "developer", true
	case "user":
		return "user", true
	case "assistant":
		return "assistant", true
	}
	return "", false
}

// isResponsesText accepts input_text (user side) and output_text (earlier
// assistant turns replayed by clients such as the Vercel AI SDK).
func isResponsesText(typ string) bool { return typ == "input_text" || typ == "output_text" }
