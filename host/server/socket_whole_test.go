package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A stream:false turn gets the events of a stream:true one, numbered the
// same, with the same answer: only their timing differs (they go out
// together at the end of the turn). A long answer (more than the 64 KiB a
// turn holds) arrives whole too.
func TestSocketStreamFalseSameEvents(t *testing.T) {
	h := start(t, nil)
	c := tenantSocket(t, h)
	kinds := func(evs []gjson.Result) string {
		var ts []string
		for i, ev := range evs {
			if ev.Get("sequence_number").Int() != int64(i) {
				t.Fatalf("event %d has sequence_number %s", i, ev.Get("sequence_number").Raw)
			}
			ts = append(ts, ev.Get("type").Str)
		}
		return strings.Join(ts, " ")
	}
	streamed := rawTurn(t, c, create(`,"input":"Hello there","stream":true`))
	whole := rawTurn(t, c, create(`,"input":"Hello there","stream":false`))
	if kinds(streamed) != kinds(whole) {
		t.Fatalf("stream:false events\n%s\nstream:true\n%s", kinds(whole), kinds(streamed))
	}
	if got := last(whole).Get("response.output_text").Str; got != "You said: Hello there" {
		t.Fatalf("stream:false answer %q", got)
	}
	c.SetReadLimit(1 << 20)
	long := strings.Repeat("word ", 3000)
	evs := rawTurn(t, c, create(`,"input":"`+long+`","stream":false`))
	if got := last(evs).Get("response.output_text").Str; got != "You said: "+strings.TrimSpace(long) {
		t.Fatalf("long stream:false answer: %d events, last %.200s", len(evs), last(evs).Raw)
	}
}
