package offline

import (
	"testing"

	"github.com/runedge/runedge/internal/pendingtest"
	"github.com/runedge/runedge/runner"
)

// TestCountPendingTexts: a request the host counts before its run
// decodes its texts (context_management's threshold) is counted as the
// decoded request, and the caller's messages stay as they were.
func TestCountPendingTexts(t *testing.T) {
	lits := []string{`"one\ntwo\tthree \"four\""`, `"five\u0020six\u00a0seven \ud83d\ude00 eight"`, `"nine\/ten"`}
	var pending, decoded []runner.Message
	for _, lit := range lits {
		p, d := pendingtest.Message(t, "user", lit)
		pending, decoded = append(pending, p), append(decoded, d)
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
