// Package jsondepth finds where JSON nests too deeply, without decoding it,
// and checks a body's validity and depth in one pass (Valid).
// A decoder recurses (or allocates) per level, and clients may send 450,000
// levels in a 1 MB body: other parsers on the way (a plugin's, a
// client's reading the echo) crash on that. A byte scan costs about a
// nanosecond per byte and no allocation, so it can run on every request.
package jsondepth

import "bytes"

// Exceeds returns the offset in b of the bracket that opens level limit+1,
// or -1 when b nests no deeper than limit. b is expected to be valid JSON
// (the caller checked it): inside strings, only quotes and backslashes are
// looked at.
func Exceeds(b []byte, limit int) int {
	at, _ := scan(b, limit)
	return at
}

// Depth returns how deeply b's arrays and objects nest, counting no
// further than limit+1.
func Depth(b []byte, limit int) int {
	_, deepest := scan(b, limit)
	return deepest
}

// Byte classes for scan; most bytes of a body are none of these.
const (
	other = iota
	quote
	backslash
	open
	closing
)

var class = func() (t [256]uint8) {
	t['"'], t['\\'] = quote, backslash
	t['['], t['{'] = open, open
	t[']'], t['}'] = closing, closing
	return t
}()

// scan returns the offset of the bracket that opens level limit+1 (-1:
// none) and the deepest level seen, counting no further than limit+1.
func scan(b []byte, limit int) (at, deepest int) {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch class[b[i]] {
		case other, backslash:
		case quote:
			// To the quote that closes the string: the next one after an
			// even run of backslashes (an escaped byte is skipped, a quote
			// or not), found by IndexByte, fast on long text.
			start := i + 1
			for i = start; ; i++ {
				j := bytes.IndexByte(b[i:], '"')
				if j < 0 {
					return -1, deepest
				}
				i += j
				n := 0
				for k := i - 1; k >= start && b[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case open:
			depth++
			if depth > deepest {
				if deepest = depth; deepest > limit {
					return i, deepest
				}
			}
		case closing:
			depth--
		}
	}
	return -1, deepest
}
