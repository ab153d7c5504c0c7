package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

func TestNewIDShapeAndUniqueness(t *testing.T) {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	seen := make(map[string]bool)
	for range 2000 {
		id := runner.NewID("run_")
		body, ok := strings.CutPrefix(id, "run_")
		if !ok {
			t.Fatalf("id %q lacks its prefix", id)
		}
		// 32 characters carry 160 bits: 48 of time, 112 random.
		if len(body) != 32 {
			t.Fatalf("id %q: %d characters after the prefix, want 32", id, len(body))
		}
		if strings.Trim(body, alphabet) != "" {
			t.Fatalf("id %q has characters outside lowercase extended-hex base32", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

// TestNewIDOrdered: an id made later sorts after one made earlier (a
// millisecond apart), whatever their random parts; ids of the same
// millisecond differ after the time prefix (10 characters).
func TestNewIDOrdered(t *testing.T) {
	for range 20 {
		a := runner.NewID("msg_")
		time.Sleep(2 * time.Millisecond)
		b := runner.NewID("msg_")
		if a >= b {
			t.Fatalf("%q made before %q sorts after it", a, b)
		}
	}
	a, b := runner.NewID(""), runner.NewID("")
	if a[10:] == b[10:] {
		t.Fatalf("random parts equal: %q %q", a, b)
	}
}
