package sdk

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// jsonScanner decodes the small JSON objects the host sends, without
// encoding/json and its reflection (see MapStreamFunc). It trusts the host
// to send valid JSON as far as speed requires: it lets control characters
// through in strings rather than check every byte.
type jsonScanner struct {
	b   []byte
	pos int
}

// maxJSONDepth bounds the nesting of values skipValue skips.
const maxJSONDepth = 64

func (s *jsonScanner) errorf(what string) error {
	return errors.New(what + " at offset " + strconv.Itoa(s.pos))
}

// space skips white space.
func (s *jsonScanner) space() {
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *jsonScanner) peek() byte {
	s.space()
	if s.pos < len(s.b) {
		return s.b[s.pos]
	}
	return 0
}

// openObject reads the start of an object and reports whether it has
// fields. For each, the caller reads the key, then the value, then calls
// next, which says whether another field follows. Nothing but white space
// may follow the object.
func (s *jsonScanner) openObject() (bool, error) {
	if s.peek() != '{' {
		return false, s.errorf("want an object")
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return false, s.end()
	}
	return true, nil
}

// key reads a field's key and the colon after it.
func (s *jsonScanner) key() (string, error) {
	key, err := s.string()
	if err != nil {
		return "", err
	}
	if s.peek() != ':' {
		return "", s.errorf("want ':'")
	}
	s.pos++
	return key, nil
}

// next reads what follows a field's value: a comma (true) or the end of the
// object (false).
func (s *jsonScanner) next() (bool, error) {
	switch s.peek() {
	case ',':
		s.pos++
		return true, nil
	case '}':
		s.pos++
		return false, s.end()
	}
	return false, s.errorf("want ',' or '}'")
}

// end checks that only white space is left.
func (s *jsonScanner) end() error {
	if s.peek() != 0 {
		return s.errorf("unexpected data after the object")
	}
	return nil
}

// string decodes a string. Without escapes, the common case, the string
// aliases the input rather than copying it: allocating is slow in a wasm
// guest, and this runs for every batch of a stream.
func (s *jsonScanner) string() (string, error) {
	if s.peek() != '"' {
		return "", s.errorf("want a string")
	}
	s.pos++
	start := s.pos
	// bytes.IndexByte is written in assembly, even for wasm: much faster
	// than a loop over the bytes.
	n := bytes.IndexByte(s.b[start:], '"')
	if n < 0 {
		return "", s.errorf("unterminated string")
	}
	if bytes.IndexByte(s.b[start:start+n], '\\') >= 0 {
		return s.escapedString(start)
	}
	s.pos = start + n + 1
	return unsafe.String(unsafe.SliceData(s.b[start:]), n), nil
}

// escapedString decodes the rest of a string that started at start and
// contains an escape at s.pos.
func (s *jsonScanner) escapedString(start int) (string, error) {
	out := append([]byte(nil), s.b[start:s.pos]...)
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		switch {
		case c == '"':
			s.pos++
			return string(out), nil
		case c != '\\':
			out = append(out, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.b) {
			break
		}
		esc := s.b[s.pos+1]
		s.pos += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r = s.lowSurrogate(r)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", s.errorf("bad escape")
		}
	}
	return "", s.errorf("unterminated string")
}

// lowSurrogate completes the UTF-16 surrogate hi, just decoded, with the
// \u escape of its low half, if that comes next. A lone surrogate becomes
// U+FFFD, as with encoding/json, and what follows it is decoded normally.
func (s *jsonScanner) lowSurrogate(hi rune) rune {
	save := s.pos
	if s.pos+1 < len(s.b) && s.b[s.pos] == '\\' && s.b[s.pos+1] == 'u' {
		s.pos += 2
		if lo, ok := s.hex4(); ok {
			if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
				return r
			}
		}
	}
	s.pos = save
	return utf8.RuneError
}

// hex4 decodes the four hex digits of a \u escape.
func (s *jsonScanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.pos:s.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	s.pos += 4
	return rune(v), true
}

// boolean decodes true or false.
func (s *jsonScanner) boolean() (bool, error) {
	switch {
	case s.literal("true"):
		return true, nil
	case s.literal("false"):
		return false, nil
	}
	return false, s.errorf("want true or false")
}

// literal consumes word if it comes next.
func (s *jsonScanner) literal(word string) bool {
	if s.peek() != word[0] || len(s.b)-s.pos < len(word) || string(s.b[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}

// skipValue skips any value.
func (s *jsonScanner) skipValue() error { return s.skip(0) }

func (s *jsonScanner) skip(depth int) error {
	if depth > maxJSONDepth {
		return s.errorf("value nested too deeply")
	}
	switch c := s.peek(); {
	case c == '"':
		_, err := s.string()
		return err
	case c == '{' || c == '[':
		return s.skipContainer(c, depth)
	case s.literal("true"), s.literal("false"), s.literal("null"):
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.pos
		for s.pos < len(s.b) && isNumberByte(s.b[s.pos]) {
			s.pos++
		}
		if _, err := strconv.ParseFloat(string(s.b[start:s.pos]), 64); err != nil {
			return s.errorf("bad number")
		}
		return nil
	}
	return s.errorf("want a value")
}

// skipContainer skips an object or array, opened by c.
func (s *jsonScanner) skipContainer(c byte, depth int) error {
	closing := byte('}')
	if c == '[' {
		closing = ']'
	}
	s.pos++
	if s.peek() == closing {
		s.pos++
		return nil
	}
	for {
		if c == '{' {
			if _, err := s.string(); err != nil {
				return err
			}
			if s.peek() != ':' {
				return s.errorf("want ':'")
			}
			s.pos++
		}
		if err := s.skip(depth + 1); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case closing:
			s.pos++
			return nil
		default:
			return s.errorf("want ',' or '" + string(closing) + "'")
		}
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
