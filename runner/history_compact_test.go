package runner

import (
	"bytes"
	"strings"
	"testing"
)

// A stored object is compacted against its output text and comes back
// byte for byte; an object that does not hold the text is kept as is.
func TestCompactObject(t *testing.T) {
	text := `say "hi" <tag> & ` + strings.Repeat("token ", 20) + "\n\u2028é"
	for _, tc := range []struct {
		name, object string
		compact      bool
	}{
		{"plain", `{"output":[{"text":` + string(quoteJSON(text, false)) + `}],"output_text":` + string(quoteJSON(text, false)) + `}`, true},
		{"html", `{"output_text":` + string(quoteJSON(text, true)) + `,"e":""}`, true},
		{"absent", `{"output_text":"other"}`, false},
		{"control bytes (not JSON)", "{\"a\":\"\x02\",\"t\":" + string(quoteJSON(text, false)) + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompactObject([]byte(tc.object), text)
			if IsCompact(c) != tc.compact || (tc.compact && len(c) >= len(tc.object)-len(text)) {
				t.Fatalf("compact %v (%d of %d bytes), want %v", IsCompact(c), len(c), len(tc.object), tc.compact)
			}
			if tc.compact {
				c = ExpandObject(c, text)
			}
			if !bytes.Equal(c, []byte(tc.object)) {
				t.Fatalf("round trip:\n got %q\nwant %q", c, tc.object)
			}
		})
	}
	short := `{"output_text":"hi"}`
	if c := CompactObject([]byte(short), "hi"); string(c) != short {
		t.Errorf("a short text is compacted: %q", c)
	}
}
