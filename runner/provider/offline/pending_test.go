package offline

import (
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner"
)

// TestCountPendingTexts: a request the host counts before its run
// decodes its texts (context_management's threshold) is counted as the
// decoded request, and the caller's messages stay as they were.
func TestCountPendingTexts(t *testing.T) {
	lits := []string{`"one\ntwo\tthree \"four\""`, `"five\u0020six\u00a0seven \ud83d\ude00 eight"`, `"nine\/ten"`}
	var pending, decoded []runner.Message
	for _, lit := range lits {
		var text string
		if err := json.Unmarshal([]byte(lit), &text); err != nil {
			t.Fatal(err)
		}
		n, marshaled, ok := jsonfast.PendingLiteral(jsonfast.Value(lit))
		if !ok {
			t.Fatalf("%s is not kept pending", lit)
		}
		var m runner.Message
		m.Role = "user"
		m.SetContentPending(lit, n, marshaled)
		pending = append(pending, m)
		decoded = append(decoded, runner.Message{Role: "user", Content: text})
	}
	if g, w := CountInputTokens(pending), CountInputTokens(decoded); g != w || w == 0 {
		t.Errorf("counted %d, want %d", g, w)
	}
	for i := range pending {
		if !pending[i].ContentPending() {
			t.Errorf("message %d decoded in the caller's slice", i)
		}
	}
}
