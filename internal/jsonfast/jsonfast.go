// Package jsonfast reads JSON members exactly as encoding/json would
// decode them into struct fields, or reports that it cannot be sure
// (ok false), so that the caller decodes with encoding/json instead. It is
// for hot paths whose inputs nearly always have one simple shape: the
// common shape costs a validity check and one pass, the rest what it cost
// before. Callers validate the document first (gjson.ValidBytes) and hold
// the two paths together with a differential test against encoding/json.
//
// A Value is a value's text as written in that validated document. The
// walk finds where each value ends and nothing more: it builds no parsed
// result for a value it is not asked to read, and reads the one it is
// asked for from its first byte. (Reading through gjson.Result, each
// value was parsed once to be passed on and again to be read, and each
// array walked by ForEach, which parses its elements: the same bytes of a
// stream chunk were scanned four to six times.)
package jsonfast

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Value is one JSON value as written in a validated document, without
// the white space around it.
type Value string

// Doc is the value of a whole validated document.
func Doc(doc string) Value {
	return Value(strings.Trim(doc, " \t\r\n"))
}

// IsObject reports whether v is an object.
func (v Value) IsObject() bool { return len(v) > 0 && v[0] == '{' }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return len(v) > 0 && v[0] == '[' }

// IsString reports whether v is a string.
func (v Value) IsString() bool { return len(v) > 0 && v[0] == '"' }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v == "null" }

// Members calls fn with the index in names of each member of object v that
// names a field (at most 32 names), and reports false (unsure) where
// encoding/json could read differently: an escaped member name, a name that
// matches a field only without regard to case (encoding/json matches
// those), a field given twice (the last one wins there), or fn returning
// false. Other members are skipped, as encoding/json skips them. A v that
// is not an object has no member to read.
func Members(v Value, names []string, fn func(i int, v Value) bool) bool {
	if !v.IsObject() {
		return true
	}
	ok := true
	var seen uint32
	eachMember(string(v), func(key, val string) bool {
		k := key[1 : len(key)-1]
		if strings.IndexByte(k, '\\') >= 0 {
			ok = false
			return false
		}
		for i, n := range names {
			if k == n {
				if seen&(1<<i) != 0 {
					ok = false
					return false
				}
				seen |= 1 << i
				ok = fn(i, Value(val))
				return ok
			}
			if strings.EqualFold(k, n) {
				ok = false
				return false
			}
		}
		return true
	})
	return ok
}

// Object calls fn on an object; null leaves the field as it is.
func Object(v Value, fn func(Value) bool) bool {
	switch {
	case v.IsNull():
		return true
	case v.IsObject():
		return fn(v)
	}
	return false
}

// Array reads an array of objects into *dst (null makes it nil), each
// element with fn. The elements go into *dst's own array when it has
// room, so a caller that decodes one chunk after another into the same
// value allocates once; encoding/json too reuses a slice's array.
func Array[T any](v Value, dst *[]T, fn func(Value, *T) bool) bool {
	if v.IsNull() {
		*dst = nil
		return true
	}
	if !v.IsArray() {
		return false
	}
	ok := true
	out := (*dst)[:0]
	if out == nil {
		out = make([]T, 0, 1)
	}
	eachElement(string(v), func(e string) bool {
		if e[0] != '{' {
			ok = false
			return false
		}
		out = append(out, *new(T))
		ok = fn(Value(e), &out[len(out)-1])
		return ok
	})
	*dst = out
	return ok
}

// String reads a string; null leaves it as it is. A string without
// escapes in valid UTF-8 is its own text; any other is unescaped as
// encoding/json unescapes it (each byte that is not UTF-8, and each
// surrogate \u escape not in a pair, read as U+FFFD), or by encoding/json
// itself when it holds what a validated string cannot.
func String(v Value, dst *string) bool {
	switch {
	case v.IsNull():
		return true
	case !v.IsString():
		return false
	}
	raw := string(v[1 : len(v)-1])
	if strings.IndexByte(raw, '\\') < 0 && utf8.ValidString(raw) {
		*dst = raw
		return true
	}
	if s, _, ok := unquote(raw); ok {
		*dst = s
		return true
	}
	return json.Unmarshal([]byte(v), dst) == nil
}

// StringLiteral is String that also returns v itself as lit when a
// writer may copy v in place of escaping *dst again: when every JSON
// reader reads v as exactly *dst, nothing in it having been replaced (no
// byte that is not UTF-8, no \u escape of a lone surrogate, which readers
// other than encoding/json keep as it is). lit is "" otherwise, and for
// null. v must come from a validated document (no raw control byte, only
// well-formed escapes), as for every reader here.
func StringLiteral(v Value, dst *string) (lit string, ok bool) {
	lit, _, ok = StringLiteralMarshaled(v, dst)
	return lit, ok
}

// StringLiteralMarshaled is StringLiteral that also reports whether lit
// is, byte for byte, what AppendString writes for *dst (json.Marshal's
// form), so that a writer bound to that form may copy it too. It is found
// while unescaping, at no cost of its own, so it is reported for texts
// with an escape only: a text without one is read in place, and marshaled
// is false for it (AppendString of such a text is a copy with one check
// a byte, what finding its form would cost). marshaled may be false for a
// literal that is in that form; it is never true for one that is not.
func StringLiteralMarshaled(v Value, dst *string) (lit string, marshaled, ok bool) {
	return StringLiteralMarshaledIn(v, dst, nil)
}

// StringLiteralMarshaledIn is StringLiteralMarshaled that unescapes a text
// into a, when not nil: the texts of a message list share a few
// allocations instead of one each (an agent's history is hundreds of
// texts with escapes), and each of them keeps its chunk alive.
func StringLiteralMarshaledIn(v Value, dst *string, a *Arena) (lit string, marshaled, ok bool) {
	switch {
	case v.IsNull():
		return "", false, true
	case !v.IsString():
		return "", false, false
	}
	raw := string(v[1 : len(v)-1])
	if strings.IndexByte(raw, '\\') < 0 && utf8.ValidString(raw) {
		*dst = raw
		return string(v), false, true
	}
	if s, form, ok := a.unquote(raw); ok {
		*dst = s
		if form != unclean {
			lit = string(v)
		}
		return lit, form == marshaledForm, true
	}
	return "", false, json.Unmarshal([]byte(v), dst) == nil
}

// What unquote found of the text's form.
const (
	marshaledForm = iota // clean, and as AppendString writes it
	clean                // every reader reads it as unquote does
	unclean              // a byte that is not UTF-8 or a lone surrogate read as U+FFFD
)

// shortEscape[e] is the byte that the escape \e stands for, for the
// escapes that keep a text in its marshaled form (\/ does not); 0 for
// the others.
var shortEscape = [256]byte{'"': '"', '\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unquote unescapes a JSON string's text (without its quotes) as
// encoding/json's unquote does, or reports false for what a valid string
// cannot hold (a control byte, a quote, a broken escape). form is unclean
// when a byte that is not UTF-8 or a lone surrogate was read as U+FFFD,
// marshaledForm when s is what AppendString writes for the text.
func unquote(s string) (_ string, form int, ok bool) {
	b, form, ok := unquoteAppend(make([]byte, 0, len(s)+2*utf8.UTFMax), s)
	if !ok {
		return "", 0, false
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), form, true // b is not used again
}

// Arena is memory that StringLiteralMarshaledIn unescapes texts into, in
// chunks of arenaChunk bytes; a text longer than a quarter of one gets an
// allocation of its own. The zero Arena is ready; a nil one is no arena.
type Arena struct{ b []byte }

const arenaChunk = 16 << 10

// unquote is unquote into a's chunk, or alone when a is nil.
func (a *Arena) unquote(s string) (_ string, form int, ok bool) {
	if a == nil || len(s) > arenaChunk/4 {
		return unquote(s)
	}
	if cap(a.b)-len(a.b) < len(s)+2*utf8.UTFMax {
		a.b = make([]byte, 0, arenaChunk)
	}
	start := len(a.b)
	b, form, ok := unquoteAppend(a.b, s)
	if !ok {
		return "", 0, false
	}
	text := b[start:len(b):len(b)]
	if unsafe.SliceData(b) == unsafe.SliceData(a.b) {
		a.b = b // the text stays where it is: the chunk's next text goes after it
	}
	// else: b grew out of the chunk (bytes that are not UTF-8 written as
	// U+FFFD take three bytes each), and the text is in b's new array.
	if len(text) == 0 {
		return "", form, true
	}
	return unsafe.String(&text[0], len(text)), form, true
}

// unquoteAppend is unquote appending the text to b. Plain ASCII is read
// and written eight bytes at a time while b has room for eight more, and
// a one-letter escape read in the same loop; whether the text holds one
// of the HTML characters < > & (which AppendString escapes) is asked of
// the whole text at the end, three IndexByte calls: with the HTML test in
// the word loop too, eight bytes cost what the byte loop (a table lookup a
// byte, an append a run) did. An agent's history is mostly text with an
// escape some thirteen bytes apart (RATIONALE.md, "Agent-sized bodies").
func unquoteAppend(b []byte, s string) (_ []byte, form int, ok bool) {
	form = marshaledForm
	for i := 0; i < len(s); {
		for i+8 <= len(s) && cap(b)-len(b) >= 8 {
			w := load64(s, i)
			m := stops(w)
			n := 8
			if m != 0 {
				n = bits.TrailingZeros64(m) >> 3
			}
			// All eight are written, the n plain ones kept: the bytes
			// after them, up to cap(b), are nobody's yet.
			binary.LittleEndian.PutUint64(b[len(b):len(b)+8], w)
			b = b[:len(b)+n]
			i += n
			if n == 8 {
				continue
			}
			// The commonest stop, \n \t \" \\ and the like, is read
			// here (b has room for one more byte), the rest below.
			if s[i] != '\\' || i+1 >= len(s) {
				break
			}
			e := shortEscape[s[i+1]]
			if e == 0 {
				break
			}
			b = append(b, e)
			i += 2
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, 0, false
			}
			switch e := s[i+1]; e {
			case '"', '\\':
				b = append(b, e)
			case '/', '\'':
				b = append(b, e)
				form = max(form, clean)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					return nil, 0, false
				}
				if !marshaledEscape(s[i:i+6], r) {
					form = max(form, clean)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4u(s[i:]); r2 >= 0 {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							b = utf8.AppendRune(b, d)
							i += 6
							continue
						}
					}
					r, form = unicode.ReplacementChar, unclean
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return nil, 0, false
			}
			i += 2
		case c == '"' || c < ' ':
			return nil, 0, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = utf8.AppendRune(b, unicode.ReplacementChar)
				form = unclean
			case r == '\u2028' || r == '\u2029':
				b = append(b, s[i:i+size]...)
				form = max(form, clean)
			default:
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	// An HTML character is never part of an escape: anywhere in s, it
	// is one the text holds.
	if form == marshaledForm && (strings.IndexByte(s, '<') >= 0 || strings.IndexByte(s, '>') >= 0 || strings.IndexByte(s, '&') >= 0) {
		form = clean
	}
	return b, form, true
}

// Masks of eight bytes read as one little-endian word, byte k in bits
// 8k to 8k+7.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 reads s[i:i+8] as a little-endian word (one load, at any
// alignment).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// stops returns a mask of w's bytes that unquoteAppend reads one at a
// time: a quote, a backslash, a control byte (below 0x20) and any byte
// from 0x80 on; of each, its high bit. Bytes after the first may be
// marked when they are not such a byte: only the first mark, the lowest,
// is exact (the subtractions borrow only from a marked byte), and only it
// is read.
func stops(w uint64) uint64 {
	return (w | (w - ones*0x20) | ((w ^ ones*'"') - ones) | ((w ^ ones*'\\') - ones)) & highs
}

// marshaledEscape reports whether esc, a \u escape of r, is how
// AppendString writes r: in lower-case hex, for a control byte without a
// short form, an HTML character, U+2028 or U+2029.
func marshaledEscape(esc string, r rune) bool {
	switch {
	case r < 0x20:
		if r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t' {
			return false
		}
	case r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
	default:
		return false
	}
	const hex = "0123456789abcdef"
	return esc[2] == hex[r>>12] && esc[3] == hex[r>>8&0xf] && esc[4] == hex[r>>4&0xf] && esc[5] == hex[r&0xf]
}

// hex4 reads the four hex digits s starts with (-1 if it does not).
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// hex4u reads the \uXXXX escape s starts with (-1 if it does not).
func hex4u(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	return hex4(s[2:])
}

// Int reads an integer written without fraction or exponent, small enough
// for any int; null leaves it as it is.
func Int(v Value, dst *int) bool {
	if v.IsNull() {
		return true
	}
	if len(v) == 0 || len(v) > 18 {
		return false
	}
	n, neg := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '-' && i == 0:
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		default:
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// Bool reads true or false; null leaves it as it is.
func Bool(v Value, dst *bool) bool {
	switch v {
	case "null":
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return false
	}
	return true
}

// Empty accepts an array that decodes to nothing: null or [].
func Empty(v Value) bool {
	return v.IsNull() || (v.IsArray() && skipSpace(string(v), 1) == len(v)-1)
}
