package metadata

import (
	"fmt"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	pairs := func(n, k, v int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			key := fmt.Sprintf("%02d", i) + strings.Repeat("k", k-2)
			fmt.Fprintf(&b, "%q:%q", key, strings.Repeat("é", v))
		}
		return b.String() + "}"
	}
	for raw, ok := range map[string]bool{
		"":                 true,
		"null":             true,
		"{}":               true,
		pairs(16, 64, 512): true, // characters, not bytes: é is two
		pairs(17, 2, 1):    false,
		pairs(1, 65, 1):    false,
		pairs(1, 2, 513):   false,
		`{"a":1}`:          false,
		`{"a":null}`:       false,
		`{"a":{"b":"c"}}`:  false,
		`["a"]`:            false,
		`"a"`:              false,
		`{"a":`:            false,
	} {
		if err := CheckJSON([]byte(raw)); (err == nil) != ok {
			t.Errorf("%.60s: %v, want ok %v", raw, err, ok)
		}
	}
}
