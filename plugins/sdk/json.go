package sdk

import "unicode/utf8"

// appendJSONString appends s as a JSON string literal. It exists so the SDK
// does not pull encoding/json and its reflection into every plugin binary.
// Invalid UTF-8 becomes U+FFFD so the result is always valid JSON. Runs of
// bytes that need no escaping are appended at once: this encodes every
// batch of streamed text.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	run := 0 // start of the bytes not yet appended
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && jsonSafe[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		b = append(b, s[run:i]...)
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default: // a byte of invalid UTF-8
			b = append(b, `\ufffd`...)
		}
		i++
		run = i
	}
	b = append(b, s[run:]...)
	return append(b, '"')
}

// jsonSafe tells which ASCII bytes appear in a JSON string as they are.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := range safe {
		safe[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return safe
}()
