package runner_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

func TestNewIDShapeAndUniqueness(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	seen := make(map[string]bool)
	for range 2000 {
		id := runner.NewID("run_")
		body, ok := strings.CutPrefix(id, "run_")
		if !ok {
			t.Fatalf("id %q lacks its prefix", id)
		}
		// 26 base32 characters carry 130 bits; fewer would be under 128.
		if len(body) < 26 {
			t.Fatalf("id %q: %d characters after the prefix, want at least 26", id, len(body))
		}
		if strings.Trim(body, alphabet) != "" {
			t.Fatalf("id %q has characters outside lowercase base32", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}
