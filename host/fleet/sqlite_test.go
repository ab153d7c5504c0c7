package fleet_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// A SQLite host killed with SIGKILL mid-stream and restarted on the same
// file with its id: the stream's run becomes failed/interrupted, found
// from the host's low-water mark (live_marks; the runs that ended before
// it raised the mark past them), and the runs that had ended keep their
// state.
func TestKilledSQLiteHostRecoversItsRun(t *testing.T) {
	spec := hostSpec{id: "host-s", sqlite: filepath.Join(t.TempDir(), "runs.db"), delay: 50 * time.Millisecond}
	h := startHost(t, spec)
	var done []string
	for range 3 {
		s := startStream(t, h, 2)
		if out := s.rest(); !strings.Contains(out, "[DONE]") {
			t.Fatalf("a short stream did not finish: %q", out)
		}
		done = append(done, s.runID)
	}
	live := startStream(t, h, 200) // ~10 s of tokens
	h.kill()

	spec.listen = strings.TrimPrefix(h.url, "http://")
	h2 := startHost(t, spec)
	if r := h2.run(t, live.runID); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("the killed stream's run after the restart: %s/%s, want failed/interrupted", r.Status, r.StatusReason)
	}
	for _, id := range done {
		if r := h2.run(t, id); r.Status != runner.StatusCompleted {
			t.Fatalf("run %s, ended before the kill: %s, want completed", id, r.Status)
		}
	}
	// The restarted host serves, and its runs end as before.
	s := startStream(t, h2, 2)
	if out := s.rest(); !strings.Contains(out, "[DONE]") {
		t.Fatalf("a stream after the restart did not finish: %q", out)
	}
	if r := h2.run(t, s.runID); r.Status != runner.StatusCompleted || r.HostID != "host-s" {
		t.Fatalf("the run after the restart: %s on %q", r.Status, r.HostID)
	}
}
