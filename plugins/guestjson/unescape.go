package guestjson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// unescape decodes the escaped text of a JSON string (without its quotes)
// as encoding/json does: a surrogate that is not half of a valid pair
// becomes U+FFFD and the escape after it is decoded on its own. Malformed
// escapes, which valid input never has, end the text.
func unescape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '"', '\\', '/':
			b = append(b, s[i+1])
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
			r, ok := hex4(s, i+2)
			if !ok {
				return string(b)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := hex4(s, i+2)
				if pair := utf16.DecodeRune(r, r2); ok && s[i] == '\\' && s[i+1] == 'u' && pair != utf8.RuneError {
					r = pair
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return string(b)
		}
		i += 2
	}
	return string(b)
}

// hex4 reads the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
