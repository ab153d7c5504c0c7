package offline

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/runedge/runedge/runner"
)

// asked is the conversation the answer is about. A repair attempt ends
// with the rejected answer and the agent's complaint (see
// runner.ProviderRequest.Attempt); the client's own last message, which
// holds the directive and seeds the document, comes before them.
func asked(req runner.ProviderRequest) []runner.Message {
	if req.Attempt > 1 && len(req.Messages) >= 2 {
		return req.Messages[:len(req.Messages)-2]
	}
	return req.Messages
}

// lastUserText is the last user message, whitespace-normalised.
func lastUserText(msgs []runner.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return strings.Join(strings.Fields(partsText(msgs[i])), " ")
		}
	}
	return ""
}

// countWords is the input token count: words across all messages.
func countWords(msgs []runner.Message) int {
	n := 0
	for _, m := range msgs {
		n += fieldCount(m.Content)
	}
	return n
}

// fieldCount is len(strings.Fields(s)) without making the fields. Every
// turn counts the whole input again, so a long conversation's history is
// counted at each turn: a loop over the bytes, ASCII looked up in a table,
// counts it at several times the speed of strings.FieldsSeq's iterator.
func fieldCount(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// asciiSpace is unicode.IsSpace over ASCII, as strings.Fields reads it.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// words splits normalised text into streaming tokens, each word after the
// first carrying its leading space ("You", " said:", " hello").
func words(text string) []string {
	f := strings.Fields(text)
	for i := 1; i < len(f); i++ {
		f[i] = " " + f[i]
	}
	return f
}

// pieces splits s into chunks of at least n bytes, never inside a UTF-8
// sequence (a split rune would reach the client as U+FFFD).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
