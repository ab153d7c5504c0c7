package runner

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// A stored object is compacted against its output text, its echo's
// members and its run's id and comes back byte for byte; an object that holds neither is
// kept as is.
func TestCompactObject(t *testing.T) {
	text := `say "hi" <tag> & ` + strings.Repeat("token ", 20) + "\n\u2028é"
	echo := `{"instructions":"be brief","tools":[{"type":"function","name":"f"}],"top_p":1,"store":true,"metadata":{}}`
	for _, tc := range []struct {
		name, object, echo, run string
		compact                 bool
	}{
		{"plain", `{"output":[{"text":` + string(quoteJSON(text, false)) + `}],"output_text":` + string(quoteJSON(text, false)) + `}`, "", "", true},
		{"html", `{"output_text":` + string(quoteJSON(text, true)) + `,"e":""}`, "", "", true},
		{"absent", `{"output_text":"other"}`, echo, "", false},
		{"control bytes (not JSON)", "{\"a\":\"\x02\",\"t\":" + string(quoteJSON(text, false)) + `}`, echo, "", false},
		{"echo members", `{"id":"resp_1","instructions":"be brief","store":true,"tools":[{"type":"function","name":"f"}],"top_p":1,"metadata":{"a":"b"}}`, echo, "", true},
		{"echo members and text", `{"instructions":"be brief","output_text":` + string(quoteJSON(text, false)) + `,"store":true}`, echo, "", true},
		{"a member written otherwise", `{"instructions": "be brief","top_p":2}`, echo, "", false},
		{"an echo that is not an object", `{"instructions":"be brief"}`, `["instructions"]`, "", false},
		{"the run's id", `{"id":"resp_0123456789abcdef","output":[{"id":"msg_0123456789abcdef"}],"metadata":{"run_id":"run_0123456789abcdef"}}`, "", "run_0123456789abcdef", true},
		{"a short run id", `{"id":"resp_0123","metadata":{"run_id":"run_0123"}}`, "", "run_0123", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompactObject([]byte(tc.object), tc.run, text, []byte(tc.echo))
			if IsCompact(c) != tc.compact || (tc.compact && len(c) >= len(tc.object)) {
				t.Fatalf("compact %v (%d of %d bytes), want %v", IsCompact(c), len(c), len(tc.object), tc.compact)
			}
			holdsText := bytes.Contains([]byte(tc.object), quoteJSON(text, false)) || bytes.Contains([]byte(tc.object), quoteJSON(text, true))
			if NeedsText(c) != (tc.compact && holdsText) {
				t.Fatalf("NeedsText = %v", NeedsText(c))
			}
			if tc.compact {
				c = ExpandObject(c, tc.run, text, []byte(tc.echo))
			}
			if !bytes.Equal(c, []byte(tc.object)) {
				t.Fatalf("round trip:\n got %q\nwant %q", c, tc.object)
			}
		})
	}
	short := `{"output_text":"hi"}`
	if c := CompactObject([]byte(short), "", "hi", nil); string(c) != short {
		t.Errorf("a short text is compacted: %q", c)
	}
	// The settings an echo shares with its object are kept once.
	obj := `{"id":"resp_1","instructions":"be brief","tools":[{"type":"function","name":"f"}],"top_p":1,"store":true,"output_text":"hi"}`
	members := len(`"instructions":"be brief"`) + len(`"tools":[{"type":"function","name":"f"}]`) + len(`"top_p":1`) + len(`"store":true`)
	if c := CompactObject([]byte(obj), "", "hi", []byte(echo)); len(c) != 1+len(obj)-members+4*2 {
		t.Errorf("the echo's members are not kept once: %q", c)
	}
}

// Objects made of an echo's members, the text in both escapings, the run's
// id, and pieces of them, in any order and overlapping, come back byte for byte.
func TestCompactObjectRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat(`<é> "q" `, 10)
	run := "run_0123456789"
	echo := `{"a":1,"tools":[{"name":"f","x":"<é>"}],"b":null,"instructions":` + string(quoteJSON(text, false)) + `,"k":"v","k2":"v"}`
	pieces := []string{`"a":1`, `"tools":[{"name":"f","x":"<é>"}]`, `"b":null`, `"instructions":`, string(quoteJSON(text, false)),
		string(quoteJSON(text, true)), `"k":"v"`, `"k2":"v"`, `"run_0123456789"`, `"resp_0123456789"`, `0123`, `,`, `"`, `:`, `{`, `}`, `[`, `]`, `1`, `"a"`, `null`}
	marked := 0
	for n := range 4000 {
		var b strings.Builder
		b.WriteByte('{')
		for j := range r.IntN(12) {
			if n%2 == 0 && j > 0 {
				b.WriteByte(',') // half of them well-formed lists of members
			}
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if n%2 == 0 {
			b.WriteByte('}')
		}
		o := []byte(b.String())
		c := CompactObject(o, run, text, []byte(echo))
		if bytes.IndexByte(c, markEcho) >= 0 {
			marked++
		}
		if got := ExpandObject(c, run, text, []byte(echo)); !bytes.Equal(got, o) {
			t.Fatalf("round trip of %q:\n got %q", o, got)
		}
	}
	if marked < 100 {
		t.Fatalf("%d of 4000 objects kept an echo member by reference", marked)
	}
}
