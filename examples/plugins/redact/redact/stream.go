package redact

import "unicode/utf8"

// MaxHold bounds the text a stream holds back. Text that goes on for longer
// than this without a space or punctuation (a long token of letters, digits
// and dots) is cut at this distance from its end, so an address straddling
// that cut could escape; real addresses are far shorter than the 64+253 bytes
// RFC 5321 allows, and never without a break.
const MaxHold = 1024

// Stream splits the text of a reply that is being streamed into what can be
// sent now, already redacted, and what must be held back until more text
// arrives: the tail that might still become, or be part of, an address or a
// number. The caller prepends hold to the next text. When final is set,
// everything is sent and hold is empty.
//
// Stream keeps no state, and its cuts never change the outcome: for any way
// of cutting a text into pieces, the concatenated emits equal Text of the
// whole (up to MaxHold), so streamed and non-streamed replies match.
func Stream(text string, final bool) (emit, hold string) {
	if final {
		return Text(text), ""
	}
	c := safePrefix(text)
	if len(text)-c > MaxHold {
		c = len(text) - MaxHold
		for c < len(text) && !utf8.RuneStart(text[c]) {
			c++
		}
	}
	return Text(text[:c]), text[c:]
}

// safePrefix returns the length of the longest prefix of s after which no
// address or number can start, end or continue differently whatever follows.
// That holds just after a break character, which is part of neither, and
// just after a space unless the space follows a digit or ")": there it may
// be the separator inside a phone number ("555 123 4567").
//
// Both sides of such a point see a non-word character (or the start or end
// of the text) next to it, which is all the scanner looks at there, so each
// side can be redacted on its own.
func safePrefix(s string) int {
	for c := len(s); c > 0; c-- {
		b := s[c-1]
		if b == ' ' {
			if c < 2 || !(isDigit(s[c-2]) || s[c-2] == ')') {
				return c
			}
			continue
		}
		if isBreak(b) {
			return c
		}
	}
	return 0
}

// isBreak reports whether b is an ASCII character that belongs to no
// address and no phone number: punctuation other than the few they use, and
// whitespace other than the space that may separate a number's groups.
func isBreak(b byte) bool {
	if b >= utf8.RuneSelf || isASCIIAlnum(b) {
		return false
	}
	switch b {
	case '.', '_', '%', '+', '-', '@', '(', ')', ' ':
		return false
	}
	return true
}
