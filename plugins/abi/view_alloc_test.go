package abi

import (
	"os"
	"strings"
	"testing"
)

// View allocates its buffer once for the replies the server maps: ids as
// the service makes them, a short text, the request echoed. (A fixed
// 256 bytes plus the text and echo was short of a chat reply's ids, and
// the buffer grew again at the echo.)
func TestViewAllocatesOnce(t *testing.T) {
	for _, file := range []string{"../compat/testdata/result/chat_completed.json", "../compat/testdata/result/responses_completed.json"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ParseResultInput(raw)
		if err != nil {
			t.Fatal(err)
		}
		// The service's ids (a prefix and runner.NewID's 32 characters)
		// and a short reply, as bench-edge's "hello" gets from the
		// offline agent: the fixed part of the input is what has to fit.
		id := strings.Repeat("06h1lm7bs", 4)[:32]
		in.ID, in.MessageID, in.SessionID, in.RunID = "chatcmpl-"+id, "msg_"+id, "sess_"+id, "run_"+id
		in.Result.Text = "hello"
		if n := testing.AllocsPerRun(100, func() { in.View(nil) }); n != 1 {
			t.Errorf("%s: View made %v allocations, want 1 (its buffer)", file, n)
		}
	}
}
