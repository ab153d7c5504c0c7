package jsondepth

import (
	"strings"
	"testing"
)

func TestExceedsAndDepth(t *testing.T) {
	for _, tc := range []struct {
		in          string
		limit, want int // want: offset from Exceeds
		depth       int
	}{
		{`{}`, 1, -1, 1},
		{`{"a":[1]}`, 1, 5, 2},
		{`{"a":"[[[[\"[[["}`, 1, -1, 1},
		{`{"a":"\\","b":[{}]}`, 2, 15, 3},
		{`"x"`, 0, -1, 0},
		{strings.Repeat("[", 10) + strings.Repeat("]", 10), 9, 9, 10},
	} {
		if got := Exceeds([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("Exceeds(%s, %d) = %d, want %d", tc.in, tc.limit, got, tc.want)
		}
		if got := Depth([]byte(tc.in), 100); got != tc.depth {
			t.Errorf("Depth(%s) = %d, want %d", tc.in, got, tc.depth)
		}
	}
}

// referenceScan is scan as it was, a byte at a time: the string jump must
// find what it found on any input, valid JSON or not.
func referenceScan(b []byte, limit int) (at, deepest int) {
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		switch class[b[i]] {
		case quote:
			inString = !inString
		case backslash:
			if inString {
				i++
			}
		case open:
			if inString {
				continue
			}
			depth++
			if depth > deepest {
				if deepest = depth; deepest > limit {
					return i, deepest
				}
			}
		case closing:
			if !inString {
				depth--
			}
		}
	}
	return -1, deepest
}

func FuzzScanMatchesReference(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x\"]}"}]}`, `"\\"[[[`, `"\\\"[["`, `["a\\\\"]`, `[[["unterminated`, `\"[`,
		`{"a":"[[[[","b":[[[[1]]]]}`, `"\`, `[\\"]`} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		limit = limit % 8
		at, d := scan(b, limit)
		rat, rd := referenceScan(b, limit)
		if at != rat || d != rd {
			t.Errorf("scan(%q, %d) = %d, %d; byte by byte %d, %d", b, limit, at, d, rat, rd)
		}
	})
}
