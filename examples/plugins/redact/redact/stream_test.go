package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// stream feeds pieces through Stream as the host does, carrying the hold
// over, and returns what was emitted in total. It fails the test if the hold
// is not empty after the final piece.
func stream(t *testing.T, pieces []string) string {
	t.Helper()
	var out strings.Builder
	hold := ""
	for i, p := range pieces {
		var emit string
		emit, hold = Stream(hold+p, i == len(pieces)-1)
		out.WriteString(emit)
	}
	if hold != "" {
		t.Fatalf("hold %q left after the final piece", hold)
	}
	return out.String()
}

// splitAt cuts s at the given byte offsets (ascending).
func splitAt(s string, cuts ...int) []string {
	var pieces []string
	last := 0
	for _, c := range cuts {
		pieces = append(pieces, s[last:c])
		last = c
	}
	return append(pieces, s[last:])
}

// Every address and number must be redacted however the text is cut into
// two pieces, including cuts inside the address or number itself.
func TestStreamEveryBoundary(t *testing.T) {
	for _, c := range textCases {
		for cut := 0; cut <= len(c.in); cut++ {
			if !utf8.RuneStart(byteAt(c.in, cut)) {
				continue // the host sends whole characters
			}
			if got := stream(t, splitAt(c.in, cut)); got != c.want {
				t.Errorf("%q cut at %d: got %q, want %q", c.in, cut, got, c.want)
			}
		}
	}
}

// byteAt returns s[i], or a rune start at the end of s.
func byteAt(s string, i int) byte {
	if i == len(s) {
		return 0
	}
	return s[i]
}

// One character at a time cuts at every boundary at once.
func TestStreamCharByChar(t *testing.T) {
	for _, c := range textCases {
		var pieces []string
		for _, r := range c.in {
			pieces = append(pieces, string(r))
		}
		if got := stream(t, append(pieces, "")); got != c.want {
			t.Errorf("%q char by char: got %q, want %q", c.in, got, c.want)
		}
	}
}

// All the cases, one per line, cut at random places many times over.
func TestStreamRandomCuts(t *testing.T) {
	var in, want strings.Builder
	for _, c := range textCases {
		in.WriteString(c.in + "\n")
		want.WriteString(c.want + "\n")
	}
	text := in.String()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var cuts []int
		for i := 1; i < len(text); i++ {
			if utf8.RuneStart(text[i]) && rng.IntN(6) == 0 {
				cuts = append(cuts, i)
			}
		}
		if got := stream(t, splitAt(text, cuts...)); got != want.String() {
			t.Fatalf("cuts %v:\n got %q\nwant %q", cuts, got, want.String())
		}
	}
}

func TestStreamHolds(t *testing.T) {
	for _, c := range []struct{ text, emit, hold string }{
		{"Hello wor", "Hello ", "wor"},
		{"Hello world. ", "Hello world. ", ""},
		{"Write to jane@exa", "Write to ", "jane@exa"},
		{"Call 555 ", "Call ", "555 "},
		{"Call (555) ", "Call ", "(555) "},
		{"Call 555-123-4567, ", "Call " + P + ", ", ""},
		{"Call 555\n", "Call 555\n", ""},
		{"no-break-at-all", "", "no-break-at-all"},
	} {
		emit, hold := Stream(c.text, false)
		if emit != c.emit || hold != c.hold {
			t.Errorf("Stream(%q) = %q, %q; want %q, %q", c.text, emit, hold, c.emit, c.hold)
		}
	}
}

// A text without any break must not be held back without limit, and the cut
// that bounds it must not split a character.
func TestStreamHoldIsBounded(t *testing.T) {
	text := strings.Repeat("é", MaxHold) // 2 bytes each
	emit, hold := Stream(text, false)
	if len(hold) > MaxHold || emit+hold != text || !utf8.ValidString(emit) || !utf8.ValidString(hold) {
		t.Errorf("hold of %d bytes (emit %d), valid %v %v", len(hold), len(emit), utf8.ValidString(emit), utf8.ValidString(hold))
	}
}

// Random texts made of the characters addresses and numbers are made of
// (where cuts are most likely to matter), cut at random places: the
// streamed result must equal the whole text redacted.
func TestStreamRandomText(t *testing.T) {
	alphabet := []string{"a", "x", "0", "1", "5", "@", ".", "-", "+", "(", ")", " ", " ", ",", "\n", "é", "_",
		"jane", "@example.com", ".org", "555", "123", "4567", "+1 ", "(555) ", "-1234"}
	rng := rand.New(rand.NewPCG(3, 4))
	redacted := 0
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(25); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		var cuts []int
		for i := 1; i < len(text); i++ {
			if utf8.RuneStart(text[i]) && rng.IntN(4) == 0 {
				cuts = append(cuts, i)
			}
		}
		want := Text(text)
		if want != text {
			redacted++
		}
		if got := stream(t, splitAt(text, cuts...)); got != want {
			t.Fatalf("%q cut at %v:\n got %q\nwant %q", text, cuts, got, want)
		}
	}
	// The alphabet is meant to make addresses and numbers common.
	if redacted < 5000 {
		t.Errorf("only %d of the texts had anything to redact", redacted)
	}
}

// FuzzStream checks the promise Stream makes: cutting never changes the
// result, as long as no run without a break exceeds MaxHold.
func FuzzStream(f *testing.F) {
	for _, c := range textCases {
		f.Add(c.in, uint16(len(c.in)/2), uint16(3))
	}
	f.Fuzz(func(t *testing.T, text string, cut, step uint16) {
		text = strings.ToValidUTF8(text, "?")
		if len(text) > MaxHold {
			text = text[:MaxHold]
			text = strings.ToValidUTF8(text, "?")
		}
		var cuts []int
		for i := int(cut) % (len(text) + 1); i < len(text); i += int(step%16) + 1 {
			if utf8.RuneStart(text[i]) && (len(cuts) == 0 || i > cuts[len(cuts)-1]) {
				cuts = append(cuts, i)
			}
		}
		if got, want := stream(t, splitAt(text, cuts...)), Text(text); got != want {
			t.Errorf("%q cut at %v: got %q, want %q", text, cuts, got, want)
		}
	})
}
