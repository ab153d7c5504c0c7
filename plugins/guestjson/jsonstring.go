package guestjson

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plainASCII[b] is true for ASCII bytes that go into a JSON string as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// plainHTMLSafe is plainASCII less the HTML characters < > &, which
// encoding/json escapes as \u003c \u003e \u0026.
var plainHTMLSafe = func() [utf8.RuneSelf]bool {
	t := plainASCII
	t['<'], t['>'], t['&'] = false, false, false
	return t
}()

// AppendString appends s to dst as a quoted JSON string.
//
// It escapes what JSON requires (quote, backslash, control characters) plus
// U+2028 and U+2029, which break JavaScript that evaluates JSON as code; bytes
// that are not valid UTF-8 become U+FFFD, as encoding/json does, so output is
// always valid UTF-8 whatever text a provider streams back. HTML characters are
// left alone: these bodies go to API clients, not into pages.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringBody appends s escaped as in AppendString, without quotes,
// so callers can join several pieces into one JSON string.
func AppendStringBody(dst []byte, s string) []byte {
	return appendStringBody(dst, s, &plainASCII)
}

// AppendStringHTMLSafe appends s as json.Marshal writes it, byte for byte:
// as AppendString does, and < > & escaped as well. For the host's bodies
// that must equal what encoding/json wrote before them (a run's recorded
// request, compared and deduplicated as bytes).
func AppendStringHTMLSafe(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s, &plainHTMLSafe)
	return append(dst, '"')
}

func appendStringBody(dst []byte, s string, plainASCII *[utf8.RuneSelf]bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if plainASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendStringValue appends the text of the string Value v, without
// quotes. When its escaped form can be copied byte for byte (no raw control
// characters, valid UTF-8) it is, which keeps escapes such as \n as they are
// and needs no decoding; otherwise the decoded text is escaped afresh. Both
// give a reader the same string.
func AppendStringValue(dst []byte, v Value) []byte {
	if in := v.Escaped(); Copyable(in) {
		return append(dst, in...)
	}
	return AppendStringBody(dst, v.Str())
}

// Copyable reports whether the escaped text inside a JSON string can be
// copied into output unchanged: valid UTF-8, no raw control characters and
// only well-formed escapes. Valid input always passes the last test; it is
// there so that no input, however malformed, makes the output invalid.
func Copyable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20:
			return false
		case b == '\\':
			if i+1 >= len(s) {
				return false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(s, i+2); !ok {
					return false
				}
				i += 5
			default:
				return false
			}
		}
	}
	return true
}
