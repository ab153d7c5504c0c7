package compat

import (
	"strconv"
	"strings"
)

// value is one JSON value exactly as it appears in a hook's input: quotes
// and escapes included, "" when absent.
//
// Hook inputs are checked as valid JSON before they reach a mapping, so
// reading them needs no validation, only finding where values end, and text
// that is only copied needs no decoding. gjson, measured here, decoded every
// string it passed (one allocation per escaped string) and scanned byte by
// byte; a value jumps from quote to quote and hands text on still escaped
// (see appendStringValue), which made a 7 KB request 2.5x faster natively and
// 2.5-4x faster in the WebAssembly guest, with 1 allocation instead of 80.
// Malformed input cannot make a value panic or loop; it just reads as less.
type value string

// parseValue returns the first JSON value in s.
func parseValue(s string) value {
	i := skipSpace(s, 0)
	return value(s[i:skipValue(s, i)])
}

func (v value) isNull() bool   { return v == "" || v == "null" } // absent or null
func (v value) isObject() bool { return v != "" && v[0] == '{' }
func (v value) isArray() bool  { return v != "" && v[0] == '[' }
func (v value) isString() bool { return len(v) >= 2 && v[0] == '"' }
func (v value) isNumber() bool { return v != "" && (v[0] == '-' || '0' <= v[0] && v[0] <= '9') }

// escaped returns the text between a string's quotes, escapes as written.
func (v value) escaped() string {
	if !v.isString() {
		return ""
	}
	return string(v[1 : len(v)-1])
}

// str decodes a string value; it allocates only when the string has escapes.
func (v value) str() string {
	in := v.escaped()
	if strings.IndexByte(in, '\\') < 0 {
		return in
	}
	return unescape(in)
}

// is reports whether v is the string s, decoding only if v has escapes.
func (v value) is(s string) bool {
	if !v.isString() {
		return false
	}
	in := v.escaped()
	if strings.IndexByte(in, '\\') < 0 {
		return in == s
	}
	return v.str() == s
}

// num returns a number value.
func (v value) num() (float64, bool) {
	if !v.isNumber() {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// bool returns a boolean value; ok is false for anything else.
func (v value) bool() (b, ok bool) {
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// members calls fn with each key (a string value) and value of an object,
// until fn returns false.
func (v value) members(fn func(key, val value) bool) {
	if !v.isObject() {
		return
	}
	s := string(v)
	i := skipSpace(s, 1)
	for i < len(s) && s[i] == '"' {
		keyEnd := skipString(s, i)
		key := value(s[i:keyEnd])
		i = skipSpace(s, keyEnd)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipSpace(s, i+1)
		end := skipValue(s, i)
		if end == i || !fn(key, value(s[i:end])) {
			return
		}
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			return
		}
		i = skipSpace(s, i+1)
	}
}

// elements calls fn with each element of an array until fn returns false.
func (v value) elements(fn func(val value) bool) {
	if !v.isArray() {
		return
	}
	s := string(v)
	i := skipSpace(s, 1)
	for i < len(s) && s[i] != ']' {
		end := skipValue(s, i)
		if end == i || !fn(value(s[i:end])) {
			return
		}
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			return
		}
		i = skipSpace(s, i+1)
	}
}

// get returns the member key of an object (the last one, if repeated, as
// when members are collected in a loop).
func (v value) get(key string) value {
	var found value
	v.members(func(k, val value) bool {
		if k.is(key) {
			found = val
		}
		return true
	})
	return found
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the index just past the value starting at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = skipString(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	case ',', ':', '}', ']':
		return i
	}
	for i < len(s) && !endsScalar(s[i]) {
		i++
	}
	return i
}

// endsScalar reports whether b ends a number or literal.
func endsScalar(b byte) bool {
	switch b {
	case ',', '}', ']', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}

// skipString returns the index just past the string starting at s[i]. It
// jumps from quote to quote, which is fast on long text, and treats a quote
// as closing when an even number of backslashes precedes it.
func skipString(s string, i int) int {
	start := i + 1
	i = start
	for {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return len(s)
		}
		i += j
		n := 0
		for k := i - 1; k >= start && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
}
