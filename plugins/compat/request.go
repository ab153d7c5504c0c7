package compat

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// native holds the options of the native run request that follow its input
// list. Both endpoints fill one and append it with appendOptions, so the two
// mappings cannot drift apart in how they spell the native request.
type native struct {
	instructions gjson.Result // a JSON string, or absent
	format       outputFormat
	stream       bool
	maxOutput    int64 // 0 when the client set no limit
}

// appendOptions appends the optional native fields, leaving out empty ones as
// the native request expects, and closes the request object.
func (n *native) appendOptions(dst []byte) []byte {
	if n.instructions.Type == gjson.String {
		dst = append(dst, `,"instructions":"`...)
		dst = appendRawStringBody(dst, n.instructions.Raw, n.instructions.Str)
		dst = append(dst, '"')
	}
	if n.format.schema != "" {
		dst = append(dst, `,"output_schema":`...)
		dst = appendCompact(dst, n.format.schema)
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
	return append(dst, '}')
}

// appendMessage appends one native input message. content must be a string
// or an array of parts whose type isText accepts; the parts' text is
// concatenated, because the native input carries plain text per message.
// list and i name the message for errors.
func appendMessage(dst []byte, role string, content gjson.Result, isText func(string) bool, list string, i int) ([]byte, error) {
	dst = append(dst, `{"role":"`...)
	dst = append(dst, role...)
	dst = append(dst, `","content":"`...)
	switch {
	case content.Type == gjson.String:
		dst = appendRawStringBody(dst, content.Raw, content.Str)
	case content.IsArray():
		var err error
		j := 0
		content.ForEach(func(_, part gjson.Result) bool {
			dst, err = appendPart(dst, part, isText, list, i, j)
			j++
			return err == nil
		})
		if err != nil {
			return dst, err
		}
	default:
		return dst, invalid(indexed(list, i)+".content", "content must be a string or an array of text content parts")
	}
	return append(dst, `"}`...), nil
}

// appendPart appends the text of the j-th content part of message i.
func appendPart(dst []byte, part gjson.Result, isText func(string) bool, list string, i, j int) ([]byte, error) {
	if !part.IsObject() {
		return dst, invalid(indexed(indexed(list, i)+".content", j), "each content part must be an object with a type")
	}
	var typ, text gjson.Result
	part.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "text":
			text = v
		}
		return true
	})
	if typ.Type != gjson.String || !isText(typ.Str) {
		return dst, invalid(indexed(indexed(list, i)+".content", j)+".type",
			"only text content parts are supported; images, audio, files and refusals cannot be sent to this model")
	}
	if text.Type != gjson.String {
		return dst, invalid(indexed(indexed(list, i)+".content", j)+".text", "a text content part needs a string text")
	}
	return appendRawStringBody(dst, text.Raw, text.Str), nil
}

// optBool reads an optional boolean; null counts as absent, as the OpenAI
// API treats it.
func optBool(r gjson.Result, param string) (bool, error) {
	switch r.Type {
	case gjson.Null:
		return false, nil
	case gjson.True:
		return true, nil
	case gjson.False:
		return false, nil
	}
	return false, invalid(param, param+" must be a boolean")
}

// optPositiveInt reads an optional token limit: absent or null gives 0,
// anything but a whole number of at least 1 is refused.
func optPositiveInt(r gjson.Result, param string) (int64, error) {
	if r.Type == gjson.Null {
		return 0, nil
	}
	if r.Type != gjson.Number || r.Num < 1 || r.Num > math.MaxInt32 || r.Num != math.Trunc(r.Num) {
		return 0, invalid(param, param+" must be a whole number of at least 1")
	}
	return int64(r.Num), nil
}
