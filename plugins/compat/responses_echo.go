package compat

import (
	"strconv"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/guestjson"
)

// responsesEcho holds the request settings a Response object repeats back,
// indexed as contract.ResponseEcho lists them (absent: the zero value).
// They travel from MapRequest to MapResult in the echo, so the final mapping
// never needs the (possibly large) client body again.
type responsesEcho [contract.NumEcho]value

// collect keeps member k if it is an echoed setting. instructions, text and
// max_output_tokens are kept too, but the request mapping reads and echoes
// them itself (appendTo's arguments).
func (e *responsesEcho) collect(k, v value) {
	if i := echoIndex(k); i >= 0 {
		e[i] = v
	}
}

// echoIndex is the index in contract.ResponseEcho of the field named by the
// JSON key k, -1 for a key that is not echoed.
func echoIndex(k value) int {
	for i := range contract.ResponseEcho {
		if k.Is(contract.ResponseEcho[i].Name) {
			return i
		}
	}
	return -1
}

// readState fills the native request's stateful settings: store defaults
// to true, and a background response must be stored (its result is
// fetched later).
func (e *responsesEcho) readState(n *native) error {
	store := true
	if !e[contract.EchoStore].IsNull() {
		store, _ = e[contract.EchoStore].Bool() // check() refused non-booleans
	}
	bg, err := optBool(e[contract.EchoBackground], "background")
	if err != nil {
		return err
	}
	if bg && !store {
		return invalid("background", "background responses must be stored: background requires store to be true")
	}
	if e[contract.EchoPreviousResponseID].IsString() && e[contract.EchoPreviousResponseID] == `""` {
		return invalid("previous_response_id", "previous_response_id must not be empty")
	}
	n.previousResponseID, n.noStore, n.background = e[contract.EchoPreviousResponseID], !store, bg
	return nil
}

// check refuses values of the wrong type (echoed as they are, they would
// make the reply unreadable to strict clients) and, as OpenAI does,
// temperature and top_p out of their ranges.
func (e *responsesEcho) check() error {
	if err := optNumberIn(e[contract.EchoTemperature], "temperature", 0, 2); err != nil {
		return err
	}
	if err := optNumberIn(e[contract.EchoTopP], "top_p", 0, 1); err != nil {
		return err
	}
	switch {
	case !e[contract.EchoMetadata].IsNull() && !e[contract.EchoMetadata].IsObject():
		return invalid("metadata", "metadata must be an object of string values")
	case !e[contract.EchoToolChoice].IsNull() && !e[contract.EchoToolChoice].IsString() && !e[contract.EchoToolChoice].IsObject():
		return invalid("tool_choice", "tool_choice must be a string or an object")
	case !e[contract.EchoTools].IsNull() && !e[contract.EchoTools].IsArray():
		return invalid("tools", "tools must be an array")
	case !e[contract.EchoUser].IsNull() && !e[contract.EchoUser].IsString():
		return invalid("user", "user must be a string")
	case !e[contract.EchoPreviousResponseID].IsNull() && !e[contract.EchoPreviousResponseID].IsString():
		return invalid("previous_response_id", "previous_response_id must be a string")
	case !e[contract.EchoTruncation].IsNull() && !e[contract.EchoTruncation].Is("auto") && !e[contract.EchoTruncation].Is("disabled"):
		return invalid("truncation", "truncation must be auto or disabled")
	}
	if _, err := optBool(e[contract.EchoParallelToolCalls], "parallel_tool_calls"); err != nil {
		return err
	}
	if _, err := optBool(e[contract.EchoStore], "store"); err != nil {
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
	dst = appendOr(dst, e[contract.EchoMetadata], `{}`)
	dst = append(dst, `,"temperature":`...)
	dst = appendOr(dst, e[contract.EchoTemperature], `1`)
	dst = append(dst, `,"top_p":`...)
	dst = appendOr(dst, e[contract.EchoTopP], `1`)
	dst = append(dst, `,"max_output_tokens":`...)
	if maxOutput > 0 {
		dst = strconv.AppendInt(dst, maxOutput, 10)
	} else {
		dst = append(dst, `null`...)
	}
	dst = append(dst, `,"text":`...)
	dst = appendTextConfig(dst, text)
	dst = append(dst, `,"tool_choice":`...)
	if e[contract.EchoToolChoice].IsString() {
		dst = appendOptString(dst, e[contract.EchoToolChoice])
	} else {
		dst = appendOr(dst, e[contract.EchoToolChoice], `"auto"`)
	}
	dst = append(dst, `,"tools":`...)
	dst = appendToolsEcho(dst, e[contract.EchoTools])
	dst = append(dst, `,"parallel_tool_calls":`...)
	dst = appendOr(dst, e[contract.EchoParallelToolCalls], `true`)
	dst = append(dst, `,"store":`...)
	dst = appendOr(dst, e[contract.EchoStore], `true`)
	dst = append(dst, `,"truncation":`...)
	if e[contract.EchoTruncation].Is("auto") {
		dst = append(dst, `"auto"`...)
	} else {
		dst = append(dst, `"disabled"`...)
	}
	dst = append(dst, `,"user":`...)
	dst = appendOptString(dst, e[contract.EchoUser])
	dst = append(dst, `,"previous_response_id":`...)
	dst = appendOptString(dst, e[contract.EchoPreviousResponseID])
	dst = append(dst, `,"background":`...)
	dst = appendOr(dst, e[contract.EchoBackground], `false`)
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
