package guestjson

import (
	"strconv"
	"strings"
)

// Value is one JSON Value exactly as it appears in a hook's input: quotes
// and escapes included, "" when absent.
//
// Hook inputs are checked as valid JSON before they reach a mapping, so
// reading them needs no validation, only finding where values end, and text
// that is only copied needs no decoding. gjson, measured here, decoded every
// string it passed (one allocation per escaped string) and scanned byte by
// byte; a Value jumps from quote to quote and hands text on still escaped
// (see AppendStringValue), which made a 7 KB request 2.5x faster natively and
// 2.5-4x faster in the WebAssembly guest, with 1 allocation instead of 80.
// Malformed input cannot make a Value panic or loop; it just reads as less.
type Value string

// Parse returns the first JSON Value in s.
func Parse(s string) Value {
	i := skipSpace(s, 0)
	return Value(s[i:skipValue(s, i)])
}

// IsNull reports whether v is absent or null.
func (v Value) IsNull() bool { return v == "" || v == "null" }

// IsObject reports whether v is an object.
func (v Value) IsObject() bool { return v != "" && v[0] == '{' }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v != "" && v[0] == '[' }

// IsString reports whether v is a string.
func (v Value) IsString() bool { return len(v) >= 2 && v[0] == '"' }

// IsNumber reports whether v is a number.
func (v Value) IsNumber() bool { return v != "" && (v[0] == '-' || '0' <= v[0] && v[0] <= '9') }

// Escaped returns the text between a string's quotes, escapes as written.
func (v Value) Escaped() string {
	if !v.IsString() {
		return ""
	}
	return string(v[1 : len(v)-1])
}

// Str decodes a string value; it allocates only when the string has escapes.
func (v Value) Str() string {
	in := v.Escaped()
	if strings.IndexByte(in, '\\') < 0 {
		return in
	}
	return unescape(in)
}

// Is reports whether v is the string s, decoding only if v has escapes.
// Unescaping shortens a text (each escape is two bytes or more for one
// rune's), so a literal no longer than s is s only when it is s's bytes
// and s holds no backslash: the keys and roles a mapping compares are
// told apart without a call to IndexByte each (eight a message on an
// agent's history, RATIONALE.md "Agent-sized bodies").
func (v Value) Is(s string) bool {
	if !v.IsString() {
		return false
	}
	in := v.Escaped()
	if in == s {
		return !hasBackslash(s)
	}
	if len(in) <= len(s) || !hasBackslash(in) {
		return false
	}
	return v.Str() == s
}

// hasBackslash reports whether s holds a backslash: by a loop for the
// short strings that Is compares, where a call costs more than the bytes.
func hasBackslash(s string) bool {
	if len(s) > 32 {
		return strings.IndexByte(s, '\\') >= 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

// Num returns a number value.
func (v Value) Num() (float64, bool) {
	if !v.IsNumber() {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// Bool returns a boolean value; ok is false for anything else.
func (v Value) Bool() (b, ok bool) {
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Members calls fn with each key (a string Value) and Value of an object,
// until fn returns false.
func (v Value) Members(fn func(key, val Value) bool) {
	v.members(nil, fn)
}

// MembersEnds is Members that jumps over the strings e knows the ends of
// (StringEnds), e being v's document's or one containing it.
func (v Value) MembersEnds(e *StringEnds, fn func(key, val Value) bool) {
	if c, ok := e.from(v); ok {
		v.members(&c, fn)
		return
	}
	v.members(nil, fn)
}

func (v Value) members(c *ends, fn func(key, val Value) bool) {
	if !v.IsObject() {
		return
	}
	s := string(v)
	i := skipSpace(s, 1)
	for i < len(s) && s[i] == '"' {
		keyEnd := skipString(s, i)
		key := Value(s[i:keyEnd])
		i = skipSpace(s, keyEnd)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipSpace(s, i+1)
		end := skipValueEnds(s, i, c)
		if end == i || !fn(key, Value(s[i:end])) {
			return
		}
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			return
		}
		i = skipSpace(s, i+1)
	}
}

// Elements calls fn with each element of an array until fn returns false.
func (v Value) Elements(fn func(val Value) bool) {
	if !v.IsArray() {
		return
	}
	s := string(v)
	i := skipSpace(s, 1)
	for i < len(s) && s[i] != ']' {
		end := skipValue(s, i)
		if end == i || !fn(Value(s[i:end])) {
			return
		}
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			return
		}
		i = skipSpace(s, i+1)
	}
}

// ObjectElements is Elements of a list of objects in one walk: for each
// element, member is called with each of its members, as Members calls
// fn, and then done with the element, as Elements calls fn, until done
// returns false. An element that is not an object goes to done alone.
// Elements finds where an element ends before fn reads it, so a reader of
// members read every string of an element twice: on an agent's history,
// every text (RATIONALE.md, "Agent-sized bodies").
func (v Value) ObjectElements(member func(key, val Value), done func(elem Value) bool) {
	v.objectElements(nil, member, done)
}

// ObjectElementsEnds is ObjectElements that jumps over the strings e
// knows the ends of (StringEnds), e being v's document's or one
// containing it.
func (v Value) ObjectElementsEnds(e *StringEnds, member func(key, val Value), done func(elem Value) bool) {
	if c, ok := e.from(v); ok {
		v.objectElements(&c, member, done)
		return
	}
	v.objectElements(nil, member, done)
}

func (v Value) objectElements(c *ends, member func(key, val Value), done func(elem Value) bool) {
	if !v.IsArray() {
		return
	}
	s := string(v)
	i := skipSpace(s, 1)
	for i < len(s) && s[i] != ']' {
		end := -1
		if s[i] == '{' {
			end = walkMembers(s, i, member, c)
		}
		if end < 0 { // not an object, or not one that ends where its members do
			end = skipValueEnds(s, i, c)
		}
		if end == i || !done(Value(s[i:end])) {
			return
		}
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			return
		}
		i = skipSpace(s, i+1)
	}
}

// walkMembers calls fn with the members of the object at s[i] and
// returns where it ends, -1 when its members do not end at its brace.
func walkMembers(s string, i int, fn func(key, val Value), c *ends) int {
	i = skipSpace(s, i+1)
	for i < len(s) && s[i] == '"' {
		keyEnd := skipString(s, i)
		key := Value(s[i:keyEnd])
		if i = skipSpace(s, keyEnd); i >= len(s) || s[i] != ':' {
			return -1
		}
		i = skipSpace(s, i+1)
		end := skipValueEnds(s, i, c)
		if end == i {
			return -1
		}
		fn(key, Value(s[i:end]))
		if i = skipSpace(s, end); i >= len(s) || s[i] != ',' {
			break
		}
		i = skipSpace(s, i+1)
	}
	if i >= len(s) || s[i] != '}' {
		return -1
	}
	return i + 1
}

// Get returns the member key of an object (the last one, if repeated, as
// when members are collected in a loop).
func (v Value) Get(key string) Value {
	var found Value
	v.Members(func(k, val Value) bool {
		if k.Is(key) {
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

// skipValue returns the index just past the Value starting at s[i].
func skipValue(s string, i int) int {
	return skipValueEnds(s, i, nil)
}

// skipValueEnds is skipValue that takes a string's end from c when c
// knows it.
func skipValueEnds(s string, i int, c *ends) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipStringEnds(s, i, c)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = skipStringEnds(s, i, c)
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

// skipStringEnds is skipString that takes the end from c when c knows
// it.
func skipStringEnds(s string, i int, c *ends) int {
	if c != nil {
		if end := c.skip(s, i); end >= 0 {
			return end
		}
	}
	return skipString(s, i)
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
