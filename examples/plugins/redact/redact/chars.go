package redact

import (
	"unicode"
	"unicode/utf8"
)

// Character classes. The scanner works on bytes; non-ASCII runes are decoded
// only where an address may hold letters of any script.

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func isASCIIAlnum(b byte) bool {
	return isDigit(b) || 'a' <= b|0x20 && b|0x20 <= 'z'
}

// isLetterRune reports whether a non-ASCII rune counts as a letter in an
// address or a word, so that "jane@müller.de" is found whole while curly
// quotes around an address stay outside it.
func isLetterRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isLocalByte reports whether an ASCII byte may appear in the local part of
// an address (the part before "@"): the dot-atom characters people use.
func isLocalByte(b byte) bool {
	return isASCIIAlnum(b) || b == '.' || b == '_' || b == '%' || b == '+' || b == '-'
}

// isDomainByte reports whether an ASCII byte may appear in a domain.
func isDomainByte(b byte) bool { return isASCIIAlnum(b) || b == '.' || b == '-' }

// wordBefore reports whether the text just before i is a word character, in
// which case a phone number cannot start at i ("id5551234567" is not one).
func wordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	if b := s[i-1]; b < utf8.RuneSelf {
		return isASCIIAlnum(b) || b == '_'
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isLetterRune(r)
}

// wordAt reports whether a word character starts at i, in which case a phone
// number cannot end just before it ("555-123-4567th" is not one).
func wordAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if b := s[i]; b < utf8.RuneSelf {
		return isASCIIAlnum(b) || b == '_'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isLetterRune(r)
}
