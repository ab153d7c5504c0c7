package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// Under steady writes from 16 callers the WAL starts over after the
// checkpoints instead of growing by every frame written: with the
// checkpointer's PASSIVE checkpoints alone (the writer appending while
// they ran) the log was never wholly copied, so SQLite never restarted
// it, and it grew by about 40 MB a second under bench-edge's load.
func TestWALStartsOverUnderSteadyWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(ctx, path, Options{CheckpointEvery: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, each = 16, 400
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("run_%d_%d", w, i)
				if err := s.StartRun(ctx, markRun(id, "h"), false, false); err != nil {
					t.Error(err)
					return
				}
				if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted, Output: "done"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// A log that never starts over holds every frame: 58 MB for these
	// 6,400 runs (about 9 KiB a run, measured with the writer's copy
	// turned off). One that starts over holds what was appended between
	// two restarts: 1.4–7 MB measured, the file keeping its largest size,
	// so a late tick of the checkpointer shows.
	if limit := int64(24 << 20); fi.Size() > limit {
		t.Fatalf("the WAL is %d bytes after %d runs, over %d: it did not start over", fi.Size(), writers*each, limit)
	}
	t.Logf("WAL %d bytes after %d runs", fi.Size(), writers*each)
}
