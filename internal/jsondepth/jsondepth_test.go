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
