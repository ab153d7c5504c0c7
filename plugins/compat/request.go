package compat

import (
	"math"
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
)

// native holds the options of the native run request that follow its input
// list. Both endpoints fill one and append it with appendOptions, so the two
// mappings cannot drift apart in how they spell the native request.
type native struct {
	instructions value // a string, or absent
	format       outputFormat
	stream       bool
	maxOutput    int64 // 0 when the client set no limit
	// The Responses API's stateful settings (runner.Request).
	previousResponseID  value // a string, or absent
	noStore, background bool
	tools               toolOptions
	// Responses only (responses_fields.go): settings passed upstream, and
	// the bound on tool calls (0: none).
	upstream     upstreamOptions
	maxToolCalls int64
}

// appendOptions appends the optional native fields, leaving out empty ones as
// the native request expects, and closes the request object.
func (n *native) appendOptions(dst []byte) []byte {
	if n.instructions.IsString() {
		dst = append(dst, `,"instructions":"`...)
		dst = guestjson.AppendStringValue(dst, n.instructions)
		dst = append(dst, '"')
	}
	if n.format.schema != "" {
		dst = append(dst, `,"output_schema":`...)
		dst = guestjson.AppendCompact(dst, string(n.format.schema))
		dst = append(dst, `,"schema_name":"`...)
		dst = append(dst, n.format.name...) // checked to be [A-Za-z0-9_-]
		dst = append(dst, '"')
	}
	if n.format.jsonObject {
		dst = append(dst, `,"json_object":true`...)
	}
	if n.stream {
		dst = append(dst, `,"stream":true`...)
	}
	if n.maxOutput > 0 {
		dst = append(dst, `,"max_output_tokens":`...)
		dst = strconv.AppendInt(dst, n.maxOutput, 10)
	}
	if n.previousResponseID.IsString() {
		dst = append(dst, `,"previous_response_id":"`...)
		dst = guestjson.AppendStringValue(dst, n.previousResponseID)
		dst = append(dst, '"')
	}
	if n.noStore {
		dst = append(dst, `,"no_store":true`...)
	}
	if n.background {
		dst = append(dst, `,"background":true`...)
	}
	dst = n.tools.appendTo(dst)
	dst = appendMaxToolCalls(dst, n.maxToolCalls)
	dst = n.upstream.appendTo(dst)
	return append(dst, '}')
}

// appendMessage appends one native input message. content must be a string
// or an array of parts the dialect knows; the text parts' text is
// concatenated into "content", and a message with other parts (images,
// files, audio: parts.go) carries all its parts in "parts" as well.
// list and i name the message for errors.
func appendMessage(dst []byte, role string, content value, d *dialect, list string, i int) ([]byte, error) {
	dst, err := appendMessageOpen(dst, role, content, d, list, i)
	return append(dst, '}'), err
}

// appendMessageOpen is appendMessage without the closing brace, so that
// tool fields can follow. A null content is an empty one (an assistant
// message that only calls tools).
func appendMessageOpen(dst []byte, role string, content value, d *dialect, list string, i int) ([]byte, error) {
	dst = append(dst, `{"role":"`...)
	dst = append(dst, role...)
	dst = append(dst, `","content":"`...)
	media := -1 // the index of the first part that is not text
	switch {
	case content.IsString():
		dst = guestjson.AppendStringValue(dst, content)
	case content.IsNull() && role == "assistant":
	case content.IsArray():
		var err error
		j := 0
		content.Elements(func(part value) bool {
			var text bool
			dst, text, err = appendPart(dst, part, d, list, i, j)
			if !text && media < 0 {
				media = j
			}
			j++
			return err == nil
		})
		if err != nil {
			return dst, err
		}
	default:
		return dst, invalid(indexed(list, i)+".content", "content must be a string or an array of content parts")
	}
	dst = append(dst, '"')
	if media < 0 {
		return dst, nil
	}
	where := indexed(list, i) + ".content"
	if role != "user" {
		return dst, unsupported(indexed(where, media)+".type", "images, files and audio are supported in user messages only")
	}
	return appendParts(dst, content, d, where)
}

// appendPart appends the text of the j-th content part of message i, or
// reports that it is an image, file or audio part (text false), which
// appendParts writes.
func appendPart(dst []byte, part value, d *dialect, list string, i, j int) ([]byte, bool, error) {
	if !part.IsObject() {
		return dst, true, invalid(indexed(indexed(list, i)+".content", j), "each content part must be an object with a type")
	}
	var typ, text value
	part.Members(func(k, v value) bool {
		switch {
		case k.Is("type"):
			typ = v
		case k.Is("text"):
			text = v
		}
		return true
	})
	if !d.isText(typ) {
		if d.isMedia(typ) {
			return dst, false, nil
		}
		return dst, true, invalid(indexed(indexed(list, i)+".content", j)+".type",
			"unknown content part type: text, images, files and audio are supported")
	}
	if !text.IsString() {
		return dst, true, invalid(indexed(indexed(list, i)+".content", j)+".text", "a text content part needs a string text")
	}
	return guestjson.AppendStringValue(dst, text), true, nil
}

// optBool reads an optional boolean; null counts as absent, as the OpenAI
// API treats it.
func optBool(v value, param string) (bool, error) {
	if v.IsNull() {
		return false, nil
	}
	if b, ok := v.Bool(); ok {
		return b, nil
	}
	return false, invalid(param, param+" must be a boolean")
}

// optPositiveInt reads an optional token limit: absent or null gives 0,
// anything but a whole number of at least 1 is refused.
func optPositiveInt(v value, param string) (int64, error) {
	if v.IsNull() {
		return 0, nil
	}
	f, ok := v.Num()
	if !ok || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, invalid(param, param+" must be a whole number of at least 1")
	}
	return int64(f), nil
}
