package offline

import (
	"strings"
	"sync"
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

// countWords is the input token count: words across all messages. A
// message of memoMin bytes or more is counted once (wordMemo): a long
// conversation's history comes again at every turn, and counting it again
// made each turn dearer than the one before.
func countWords(msgs []runner.Message) int {
	n := 0
	var long []int // indexes of the messages wordMemo may hold
	for i, m := range msgs {
		if len(m.Content) < memoMin {
			n += fieldCount(m.Content)
		} else {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return n
	}
	var miss []int
	wordMemo.mu.Lock()
	for _, i := range long {
		if c, ok := wordMemo.n[msgs[i].Content]; ok {
			n += c
		} else {
			miss = append(miss, i)
		}
	}
	wordMemo.mu.Unlock()
	if len(miss) == 0 {
		return n
	}
	counted := make([]int, len(miss))
	for j, i := range miss {
		counted[j] = fieldCount(msgs[i].Content)
		n += counted[j]
	}
	wordMemo.mu.Lock()
	defer wordMemo.mu.Unlock()
	for j, i := range miss {
		s := msgs[i].Content
		if wordMemo.bytes+len(s) > memoBytes {
			clear(wordMemo.n)
			wordMemo.bytes = 0
		}
		if _, ok := wordMemo.n[s]; !ok {
			// A copy: the content may be a view of a larger buffer, which
			// the key would keep, or of one that is used again.
			wordMemo.n[strings.Clone(s)] = counted[j]
			wordMemo.bytes += len(s) + 64
		}
	}
	return n
}

// memoMin is the least content wordMemo keeps: a shorter one is counted in
// about the time its lookup takes.
const memoMin = 256

// memoBytes bounds what wordMemo keeps (its contents' bytes); when full it
// starts again empty. A 200-turn conversation of 560-byte messages is
// about 112 KB, so it holds some eighteen at once: enough for the offline
// provider, whose host is held to 64 MiB of peak RSS.
const memoBytes = 2 << 20

// wordMemo is the word count of the long message contents counted lately,
// by content: a string key is hashed and compared at memory speed, many
// times faster than the count.
var wordMemo = struct {
	mu    sync.Mutex
	n     map[string]int
	bytes int
}{n: map[string]int{}}

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
