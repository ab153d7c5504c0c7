package jsonfast

import (
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// PendingLiteral reports whether string v, which holds an escape, may be
// kept as its literal and unescaped only when something reads its text
// (native.Message.SetContentPending): every JSON reader reads v as the
// same text (no byte that is not UTF-8, no lone surrogate: what
// StringLiteral hands back), and n is that text's length in bytes.
// marshaled is StringLiteralMarshaled's: v is AppendString's form of the
// text. It reads v once without writing anything: what unescaping costs
// less the text's memory and its writes. ok is false for a string without
// an escape (read in place, it costs nothing to keep), for one that is
// not clean, and for what a valid string cannot hold; the caller reads
// those as before. v must come from a validated document.
func PendingLiteral(v Value) (n int, marshaled, ok bool) {
	if !v.IsString() || len(v) < 2 {
		return 0, false, false
	}
	raw := string(v[1 : len(v)-1])
	if strings.IndexByte(raw, '\\') < 0 {
		return 0, false, false
	}
	n, form, ok := unquoteLen(raw)
	if !ok || form == unclean {
		return 0, false, false
	}
	return n, form == marshaledForm, true
}

// unquoteLen is unquoteAppend without the text: the length and form of
// what it would append for s, or false where it fails. FuzzUnquoteLen
// holds the two together.
func unquoteLen(s string) (n, form int, ok bool) {
	form = marshaledForm
	for i := 0; i < len(s); {
		for i+8 <= len(s) {
			m := stops(load64(s, i))
			if m == 0 {
				i += 8
				n += 8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i += k
			n += k
			if s[i] != '\\' || i+1 >= len(s) {
				break
			}
			if shortEscape[s[i+1]] == 0 {
				break
			}
			n++
			i += 2
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return 0, 0, false
			}
			switch e := s[i+1]; e {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			case '/', '\'':
				form = max(form, clean)
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					return 0, 0, false
				}
				if !marshaledEscape(s[i:i+6], r) {
					form = max(form, clean)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4u(s[i:]); r2 >= 0 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							n += utf8.RuneLen(d)
							i += 6
							continue
						}
					}
					r, form = utf8.RuneError, unclean
				}
				n += utf8.RuneLen(r)
				continue
			default:
				return 0, 0, false
			}
			n++
			i += 2
		case c == '"' || c < ' ':
			return 0, 0, false
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				n += utf8.RuneLen(utf8.RuneError)
				form = unclean
			case r == '\u2028' || r == '\u2029':
				n += size
				form = max(form, clean)
			default:
				n += size
			}
			i += size
		}
	}
	if form == marshaledForm && (strings.IndexByte(s, '<') >= 0 || strings.IndexByte(s, '>') >= 0 || strings.IndexByte(s, '&') >= 0) {
		form = clean
	}
	return n, form, true
}

// PlainPendingLiteral is PendingLiteral for string v of a document whose
// every string is plain (jsondepth.ValidPlain: ASCII, one-letter escapes
// other than \/ and \\), which every reader reads alike: its text is its
// bytes less one a backslash, counted (strings.Count) rather than read. It
// is in json.Marshal's form unless it holds < > or &.
// FuzzPlainPendingLiteral holds it to PendingLiteral.
func PlainPendingLiteral(v Value) (n int, marshaled, ok bool) {
	if !v.IsString() || len(v) < 2 {
		return 0, false, false
	}
	raw := string(v[1 : len(v)-1])
	escapes := strings.Count(raw, `\`)
	if escapes == 0 {
		return 0, false, false
	}
	marshaled = strings.IndexByte(raw, '<') < 0 && strings.IndexByte(raw, '>') < 0 && strings.IndexByte(raw, '&') < 0
	return len(raw) - escapes, marshaled, true
}
