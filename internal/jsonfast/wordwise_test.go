package jsonfast

import (
	"bytes"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unquoteAppendBytewise is unquoteAppend as it was before it read eight
// bytes at a time: the reference FuzzUnquoteWordwise holds it to.
func unquoteAppendBytewise(b []byte, s string) (_ []byte, form int, ok bool) {
	form = marshaledForm
	for i := 0; i < len(s); {
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
			if !plainMarshaled[c] { // < > &
				form = max(form, clean)
			}
			j := i + 1
			for j < len(s) && plainMarshaled[s[j]] {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
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
	return b, form, true
}

// plainMarshaled[b] is true for the bytes AppendString writes as they
// are: ASCII from the space on, less " \\ and the HTML characters < > &.
var plainMarshaled = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// FuzzUnquoteWordwise: unquoteAppend reads every text as the byte loop
// it replaces did (the same text, form and answer), appending to a b with
// any room left in it, at any alignment of the text.
func FuzzUnquoteWordwise(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s, uint8(0), uint8(0))
		f.Add(s+s+s, uint8(3), uint8(5))
	}
	for _, s := range []string{"0000000&", `if a < b && c > d {\n\treturn\n}`, "\\n\\t</a>\\u2028 caf\xc3\xa9", `\n<`} {
		f.Add(s, uint8(1), uint8(9))
	}
	f.Fuzz(func(t *testing.T, s string, prefix, room uint8) {
		pre := bytes.Repeat([]byte{'p'}, int(prefix%16))
		want, wform, wok := unquoteAppendBytewise(append([]byte(nil), pre...), s)
		for _, extra := range []int{0, int(room % 16), len(s) + 2*utf8.UTFMax} {
			b := append(make([]byte, 0, len(pre)+extra), pre...)
			got, form, ok := unquoteAppend(b, s)
			if ok != wok || ok && (form != wform || !bytes.Equal(got, want)) {
				t.Fatalf("unquoteAppend(%q) with room %d = %q, %d, %v; byte by byte %q, %d, %v", s, extra, got, form, ok, want, wform, wok)
			}
		}
		// At each alignment: the text at an offset of a longer string.
		for off := 1; off < 8 && off <= len(s); off++ {
			want, wform, wok := unquoteAppendBytewise(nil, s[off:])
			got, form, ok := unquoteAppend(make([]byte, 0, len(s)+8), s[off:])
			if ok != wok || ok && (form != wform || !bytes.Equal(got, want)) {
				t.Fatalf("unquoteAppend(%q) = %q, %d, %v; byte by byte %q, %d, %v", s[off:], got, form, ok, want, wform, wok)
			}
		}
	})
}
