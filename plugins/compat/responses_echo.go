package compat

import (
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
)

// responsesEcho holds the request settings a Response object repeats back.
// They travel from MapRequest to MapResult in the echo, so the final mapping
// never needs the (possibly large) client body again.
type responsesEcho struct {
	metadata, temperature, topP, toolChoice, tools value
	parallelToolCalls, store, truncation, user     value
	previousResponseID, background                 value
	openFields                                     // the Open Responses fields (responses_fields.go)
}

// collect keeps member k if it is an echoed setting.
func (e *responsesEcho) collect(k, v value) {
	switch {
	case k.Is("metadata"):
		e.metadata = v
	case k.Is("temperature"):
		e.temperature = v
	case k.Is("top_p"):
		e.topP = v
	case k.Is("tool_choice"):
		e.toolChoice = v
	case k.Is("tools"):
		e.tools = v
	case k.Is("parallel_tool_calls"):
		e.parallelToolCalls = v
	case k.Is("store"):
		e.store = v
	case k.Is("truncation"):
		e.truncation = v
	case k.Is("user"):
		e.user = v
	case k.Is("previous_response_id"):
		e.previousResponseID = v
	case k.Is("background"):
		e.background = v
	default:
		e.openFields.collect(k, v)
	}
}

// readState fills the native request's stateful settings: store defaults
// to true, and a background response must be stored (its result is
// fetched later).
func (e *responsesEcho) readState(n *native) error {
	store := true
	if !e.store.IsNull() {
		store, _ = e.store.Bool() // check() refused non-booleans
	}
	bg, err := optBool(e.background, "background")
	if err != nil {
		return err
	}
	if bg && !store {
		return invalid("background", "background responses must be stored: background requires store to be true")
	}
	if e.previousResponseID.IsString() && e.previousResponseID == `""` {
		return invalid("previous_response_id", "previous_response_id must not be empty")
	}
	n.previousResponseID, n.noStore, n.background = e.previousResponseID, !store, bg
	return nil
}

// check refuses values of the wrong type (echoed as they are, they would
// make the reply unreadable to strict clients) and, as OpenAI does,
// temperature and top_p out of their ranges.
func (e *responsesEcho) check() error {
	if err := optNumberIn(e.temperature, "temperature", 0, 2); err != nil {
		return err
	}
	if err := optNumberIn(e.topP, "top_p", 0, 1); err != nil {
		return err
	}
	switch {
	case !e.metadata.IsNull() && !e.metadata.IsObject():
		return invalid("metadata", "metadata must be an object of string values")
	case !e.toolChoice.IsNull() && !e.toolChoice.IsString() && !e.toolChoice.IsObject():
		return invalid("tool_choice", "tool_choice must be a string or an object")
	case !e.tools.IsNull() && !e.tools.IsArray():
		return invalid("tools", "tools must be an array")
	case !e.user.IsNull() && !e.user.IsString():
		return invalid("user", "user must be a string")
	case !e.previousResponseID.IsNull() && !e.previousResponseID.IsString():
		return invalid("previous_response_id", "previous_response_id must be a string")
	case !e.truncation.IsNull() && !e.truncation.Is("auto") && !e.truncation.Is("disabled"):
		return invalid("truncation", "truncation must be auto or disabled")
	}
	if _, err := optBool(e.parallelToolCalls, "parallel_tool_calls"); err != nil {
		return err
	}
	if _, err := optBool(e.store, "store"); err != nil {
		return err
	}
	return e.checkFields()
}

// appendTo appends the echo object, with the API's defaults for settings the
// client left out. Its keys are read back by readResponseEcho in MapResult.
func (e *responsesEcho) appendTo(dst []byte, instructions value, maxOutput int64, text value) []byte {
	dst = append(dst, `{"instructions":`...)
	dst = appendOptString(dst, instructions)
	dst = append(dst, `,"metadata":`...)
	dst = appendOr(dst, e.metadata, `{}`)
	dst = append(dst, `,"temperature":`...)
	dst = appendOr(dst, e.temperature, `1`)
	dst = append(dst, `,"top_p":`...)
	dst = appendOr(dst, e.topP, `1`)
	dst = append(dst, `,"max_output_tokens":`...)
	if maxOutput > 0 {
		dst = strconv.AppendInt(dst, maxOutput, 10)
	} else {
		dst = append(dst, `null`...)
	}
	dst = append(dst, `,"text":`...)
	dst = appendTextConfig(dst, text)
	dst = append(dst, `,"tool_choice":`...)
	if e.toolChoice.IsString() {
		dst = appendOptString(dst, e.toolChoice)
	} else {
		dst = appendOr(dst, e.toolChoice, `"auto"`)
	}
	dst = append(dst, `,"tools":`...)
	dst = appendToolsEcho(dst, e.tools)
	dst = append(dst, `,"parallel_tool_calls":`...)
	dst = appendOr(dst, e.parallelToolCalls, `true`)
	dst = append(dst, `,"store":`...)
	dst = appendOr(dst, e.store, `true`)
	dst = append(dst, `,"truncation":`...)
	if e.truncation.Is("auto") {
		dst = append(dst, `"auto"`...)
	} else {
		dst = append(dst, `"disabled"`...)
	}
	dst = append(dst, `,"user":`...)
	dst = appendOptString(dst, e.user)
	dst = append(dst, `,"previous_response_id":`...)
	dst = appendOptString(dst, e.previousResponseID)
	dst = append(dst, `,"background":`...)
	dst = appendOr(dst, e.background, `false`)
	dst = e.appendFields(dst)
	return append(dst, '}')
}

// appendTextConfig echoes the client's text object, adding the default
// format {"type":"text"} when the client sent none (as with `text: {}`), since
// clients read response.text.format.type.
func appendTextConfig(dst []byte, text value) []byte {
	if !text.IsObject() {
		return append(dst, `{"format":{"type":"text"}}`...)
	}
	if f := text.Get("format"); f.IsObject() {
		if f.Get("type").Is("json_schema") {
			return appendSchemaTextConfig(dst, text)
		}
		return guestjson.AppendCompact(dst, string(text))
	}
	dst = append(dst, `{"format":{"type":"text"}`...)
	text.Members(func(k, v value) bool {
		if !k.Is("format") {
			dst = append(dst, ',')
			dst = append(dst, k...)
			dst = append(dst, ':')
			dst = guestjson.AppendCompact(dst, string(v))
		}
		return true
	})
	return append(dst, '}')
}

// appendOr appends v without whitespace, or def when v is absent or null.
func appendOr(dst []byte, v value, def string) []byte {
	if v.IsNull() {
		return append(dst, def...)
	}
	return guestjson.AppendCompact(dst, string(v))
}

// appendOptString appends a string value, or null when v is not a string.
func appendOptString(dst []byte, v value) []byte {
	if !v.IsString() {
		return append(dst, `null`...)
	}
	dst = append(dst, '"')
	dst = guestjson.AppendStringValue(dst, v)
	return append(dst, '"')
}
