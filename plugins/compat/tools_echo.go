package compat

import "github.com/runedge/runedge/plugins/guestjson"

// The echo of tools and text.format in the Response object. The Open
// Responses description requires keys a client may leave out — a function
// tool's description, parameters and strict; a json_schema format's
// description and strict — so the echo is the client's object as sent,
// with each missing key added at the API's default: null where the schema
// allows it, strict false for a format (OpenAI's default there), and ""
// for a format's description (appendFormatEcho).

// appendToolsEcho appends the tools array as sent, each function tool
// completed with the keys it lacks; [] when there are none.
func appendToolsEcho(dst []byte, tools value) []byte {
	if !tools.IsArray() {
		return append(dst, `[]`...)
	}
	dst = append(dst, '[')
	i := 0
	tools.Elements(func(t value) bool {
		if i > 0 {
			dst = append(dst, ',')
		}
		i++
		if !t.IsObject() || !t.Get("type").Is("function") {
			dst = guestjson.AppendCompact(dst, string(t))
			return true
		}
		dst = appendCompleted(dst, t, `,"description":null`, `,"parameters":null`, `,"strict":null`)
		return true
	})
	return append(dst, ']')
}

// appendSchemaTextConfig appends a text object whose format is json_schema,
// the format completed with the keys it lacks.
func appendSchemaTextConfig(dst []byte, text value) []byte {
	dst = append(dst, '{')
	first := true
	text.Members(func(k, v value) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, k...)
		dst = append(dst, ':')
		if k.Is("format") {
			dst = appendFormatEcho(dst, v)
		} else {
			dst = guestjson.AppendCompact(dst, string(v))
		}
		return true
	})
	return append(dst, '}')
}

// appendFormatEcho appends a json_schema format completed with the keys it
// lacks. Its description is a string: the Open Responses description
// requires the key, OpenAI's types it a string when present, so a
// description the client left out or sent as null is echoed as "" (valid
// against both; null is valid against neither at once).
func appendFormatEcho(dst []byte, format value) []byte {
	if d := format.Get("description"); d.IsString() {
		return appendCompleted(dst, format, `,"strict":false`)
	}
	dst = append(dst, '{')
	first := true
	format.Members(func(k, v value) bool {
		if k.Is("description") {
			return true
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, k...)
		dst = append(dst, ':')
		dst = guestjson.AppendCompact(dst, string(v))
		return true
	})
	dst = append(dst, `,"description":""`...)
	if format.Get("strict") == "" {
		dst = append(dst, `,"strict":false`...)
	}
	return append(dst, '}')
}

// appendCompleted appends object obj compacted, then each of the defaults
// (`,"key":value`) whose key obj does not have. obj has at least its type.
func appendCompleted(dst []byte, obj value, defaults ...string) []byte {
	dst = guestjson.AppendCompact(dst, string(obj))
	dst = dst[:len(dst)-1] // reopen the object
	for _, d := range defaults {
		key := d[2 : 2+indexQuote(d[2:])] // `,"key":…` → key
		if obj.Get(key) == "" {
			dst = append(dst, d...)
		}
	}
	return append(dst, '}')
}

// indexQuote returns the index of the first '"' in s.
func indexQuote(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			return i
		}
	}
	return len(s)
}
