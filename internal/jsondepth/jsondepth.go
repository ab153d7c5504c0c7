// Package jsondepth finds where JSON nests too deeply, without decoding it.
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
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := stringEnd(b, i+1)
			if end < 0 {
				return -1
			}
			i = end
		case '[', '{':
			if depth++; depth > limit {
				return i
			}
		case ']', '}':
			depth--
		}
	}
	return -1
}

// Depth returns how deeply b's arrays and objects nest, counting no
// further than limit+1.
func Depth(b []byte, limit int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := stringEnd(b, i+1)
			if end < 0 {
				return deepest
			}
			i = end
		case '[', '{':
			depth++
			if deepest = max(deepest, depth); deepest > limit {
				return deepest
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// stringEnd returns the offset of the quote that closes the string whose
// contents start at from, or -1.
func stringEnd(b []byte, from int) int {
	for j := from; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p >= from && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
	return -1
}
