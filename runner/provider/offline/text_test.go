package offline

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

// fieldCases are texts whose word count strings.Fields decides: ASCII and
// Unicode spaces, a next line (U+0085) and a no-break space (U+00A0),
// which unicode.IsSpace counts, invalid UTF-8, which it does not.
var fieldCases = []string{
	"", " ", "one", " one ", "one two  three", "\t\n\v\f\r x \r\n",
	"a\u0085b", "a\u00a0b", "a\u2003b\u3000c", "\xff \xfe\xff", "é à", "x\x00y",
	"a\u200bb", "\u1680lead", "trail\u2028", "\xc2", "\xc2\x85",
}

func TestFieldCountMatchesFields(t *testing.T) {
	for _, s := range fieldCases {
		if got, want := fieldCount(s), len(strings.Fields(s)); got != want {
			t.Errorf("fieldCount(%q) = %d; strings.Fields gives %d", s, got, want)
		}
	}
	msgs := []runner.Message{{Content: "two words"}, {Content: " and\u00a0three more "}}
	if got := countWords(msgs); got != 5 {
		t.Errorf("countWords = %d; want 5", got)
	}
}

// TestCountWordsKept counts long messages, kept by their content after
// the first count, as strings.Fields does: again, changed to other words
// of the same length, and once what is kept has been dropped.
func TestCountWordsKept(t *testing.T) {
	want := func(msgs []runner.Message) int {
		n := 0
		for _, m := range msgs {
			n += len(strings.Fields(m.Content))
		}
		return n
	}
	msgs := []runner.Message{{Content: "short one"}, {Content: strings.Repeat("a long message of many words\u00a0", 20)},
		{Content: strings.Repeat("x", memoMin)}, {Content: strings.Repeat("one two ", 100)}}
	for range 2 {
		if got := countWords(msgs); got != want(msgs) {
			t.Fatalf("countWords = %d; strings.Fields gives %d", got, want(msgs))
		}
	}
	// The same length, other words: a content is kept by its bytes.
	msgs[3].Content = strings.Repeat("onetwo  ", 100)
	if got := countWords(msgs); got != want(msgs) {
		t.Fatalf("countWords after a change = %d; strings.Fields gives %d", got, want(msgs))
	}
	// Filling what is kept starts it again.
	big := []runner.Message{{Content: strings.Repeat("w ", memoBytes/4)}, {Content: strings.Repeat("v ", memoBytes/4+1)}}
	for range 2 {
		if got := countWords(append(big, msgs...)); got != want(big)+want(msgs) {
			t.Fatalf("countWords past the bound = %d; want %d", got, want(big)+want(msgs))
		}
	}
}

func FuzzFieldCount(f *testing.F) {
	for _, s := range fieldCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := fieldCount(s), len(strings.Fields(s)); got != want {
			t.Fatalf("fieldCount(%q) = %d; strings.Fields gives %d", s, got, want)
		}
	})
}

// BenchmarkCountWords counts a 200-turn conversation's input, what the
// offline provider does at every turn of it.
func BenchmarkCountWords(b *testing.B) {
	msgs := make([]runner.Message, 400)
	for i := range msgs {
		msgs[i].Content = strings.Repeat("the quick brown fox jumps over the lazy dog, ", 12)
	}
	b.SetBytes(int64(400 * len(msgs[0].Content)))
	for b.Loop() {
		countWords(msgs)
	}
}
