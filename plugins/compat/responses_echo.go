package compat

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// responsesEcho holds the request settings a Response object repeats back.
// They travel from MapRequest to MapResult in the echo, so the final mapping
// never needs the (possibly large) client body again.
type responsesEcho struct {
	metadata, temperature, topP, toolChoice, tools gjson.Result
	parallelToolCalls, store, truncation, user     gjson.Result
	previousResponseID                             gjson.Result
}

// check refuses values of the wrong type: echoed as they are, they would
// make the reply unreadable to strict clients.
func (e *responsesEcho) check() error {
	switch {
	case e.metadata.Type != gjson.Null && !e.metadata.IsObject():
		return invalid("metadata", "metadata must be an object of string values")
	case e.temperature.Type != gjson.Null && e.temperature.Type != gjson.Number:
		return invalid("temperature", "temperature must be a number")
	case e.topP.Type != gjson.Null && e.topP.Type != gjson.Number:
		return invalid("top_p", "top_p must be a number")
	case e.toolChoice.Type != gjson.Null && e.toolChoice.Type != gjson.String && !e.toolChoice.IsObject():
		return invalid("tool_choice", "tool_choice must be a string or an object")
	case e.tools.Type != gjson.Null && !e.tools.IsArray():
		return invalid("tools", "tools must be an array")
	case e.user.Type != gjson.Null && e.user.Type != gjson.String:
		return invalid("user", "user must be a string")
	case e.previousResponseID.Type != gjson.Null && e.previousResponseID.Type != gjson.String:
		return invalid("previous_response_id", "previous_response_id must be a string")
	case e.truncation.Type != gjson.Null && (e.truncation.Type != gjson.String ||
		e.truncation.Str != "auto" && e.truncation.Str != "disabled"):
		return invalid("truncation", "truncation must be auto or disabled")
	}
	if _, err := optBool(e.parallelToolCalls, "parallel_tool_calls"); err != nil {
		return err
	}
	_, err := optBool(e.store, "store")
	return err
}

// appendTo appends the echo object, with the API's defaults for settings the
// client left out. Its keys are read back by responseEcho in MapResult.
func (e *responsesEcho) appendTo(dst []byte, instructions gjson.Result, maxOutput int64, text gjson.Result) []byte {
	dst = append(dst, `{"instructions":`...)
	dst = appendOptString(dst, instructions)
	dst = append(dst, `,"metadata":`...)
	dst = appendRawOr(dst, e.metadata, `{}`)
	dst = append(dst, `,"temperature":`...)
	dst = appendRawOr(dst, e.temperature, `1`)
	dst = append(dst, `,"top_p":`...)
	dst = appendRawOr(dst, e.topP, `1`)
	dst = append(dst, `,"max_output_tokens":`...)
	if maxOutput > 0 {
		dst = strconv.AppendInt(dst, maxOutput, 10)
	} else {
		dst = append(dst, `null`...)
	}
	dst = append(dst, `,"text":`...)
	dst = appendTextConfig(dst, text)
	dst = append(dst, `,"tool_choice":`...)
	if e.toolChoice.Type == gjson.String {
		dst = appendOptString(dst, e.toolChoice)
	} else {
		dst = appendRawOr(dst, e.toolChoice, `"auto"`)
	}
	dst = append(dst, `,"tools":`...)
	dst = appendRawOr(dst, e.tools, `[]`)
	dst = append(dst, `,"parallel_tool_calls":`...)
	dst = appendRawOr(dst, e.parallelToolCalls, `true`)
	dst = append(dst, `,"store":`...)
	dst = appendRawOr(dst, e.store, `true`)
	dst = append(dst, `,"truncation":`...)
	dst = appendRawOr(dst, e.truncation, `"disabled"`) // checked: auto or disabled
	dst = append(dst, `,"user":`...)
	dst = appendOptString(dst, e.user)
	dst = append(dst, `,"previous_response_id":`...)
	dst = appendOptString(dst, e.previousResponseID)
	return append(dst, '}')
}

// appendTextConfig echoes the client's text object, adding the default
// format {"type":"text"} when the client sent none (as with `text: {}`), since
// clients read response.text.format.type.
func appendTextConfig(dst []byte, text gjson.Result) []byte {
	if !text.IsObject() {
		return append(dst, `{"format":{"type":"text"}}`...)
	}
	if text.Get("format").IsObject() {
		return appendCompact(dst, text.Raw)
	}
	dst = append(dst, `{"format":{"type":"text"}`...)
	text.ForEach(func(k, v gjson.Result) bool {
		if k.Str != "format" {
			dst = append(dst, ',')
			dst = append(dst, k.Raw...)
			dst = append(dst, ':')
			dst = appendCompact(dst, v.Raw)
		}
		return true
	})
	return append(dst, '}')
}

// appendRawOr appends the JSON of r without whitespace, or def when r is absent or null.
func appendRawOr(dst []byte, r gjson.Result, def string) []byte {
	if r.Type == gjson.Null {
		return append(dst, def...)
	}
	return appendCompact(dst, r.Raw)
}

// appendOptString appends a string result, or null when it is not a string.
func appendOptString(dst []byte, r gjson.Result) []byte {
	if r.Type != gjson.String {
		return append(dst, `null`...)
	}
	dst = append(dst, '"')
	dst = appendRawStringBody(dst, r.Raw, r.Str)
	return append(dst, '"')
}
