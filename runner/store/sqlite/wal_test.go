package sqlite

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// walState is the checkpoint sequence number in the header of the WAL at
// path (SQLite's file format, bytes 12–15), which SQLite raises each time
// the log starts over from its beginning, and the file's size. 0, 0 while
// there is no WAL.
func walState(t *testing.T, path string) (restarts uint32, size int64) {
	t.Helper()
	f, err := os.Open(path + "-wal")
	if os.IsNotExist(err) {
		return 0, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var h [16]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0, 0 // not written yet
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(h[12:]), fi.Size()
}

// Under steady writes from 16 callers the WAL starts over after the
// checkpoints instead of growing by every frame written: with the
// checkpointer's PASSIVE checkpoints alone (the writer appending while
// they ran) the log was never wholly copied, so SQLite never restarted
// it, and it grew by about 40 MB a second under bench-edge's load.
//
// The test is the checkpointer's ticks, taken by the test itself (the
// store's own ticker never fires in it), so that it does not depend on
// when a loaded machine gives the ticker the CPU and the disk: how far the
// log grows between two restarts does, and a bound on the file's size
// failed now and then. Each cycle waits for a log of at least tailFrames,
// checkpoints it PASSIVE while the writers append, as a tick does, and
// then asks the writer to copy the tail (after, again until the log
// starts over: a reader's snapshot may hold the copy back once). The
// measure is the restarts SQLite counts in the WAL's header: every cycle
// must start the log over, within maxRuns runs in all. With PASSIVE
// checkpoints alone nothing starts it over (58–64 MB for 6,400 runs,
// about 9 KiB a run).
func TestWALStartsOverUnderSteadyWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(ctx, path, Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, maxRuns, cycles = 16, 2 * 6400, 3
	var (
		wg   sync.WaitGroup
		runs atomic.Int64
		stop atomic.Bool
	)
	for w := range writers {
		wg.Go(func() {
			for i := 0; !stop.Load() && runs.Add(1) <= maxRuns; i++ {
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
	defer wg.Wait()
	defer stop.Store(true)
	writing := func() bool { return runs.Load() < maxRuns && !t.Failed() }
	for c := range cycles {
		frames := 0
		for frames < tailFrames && writing() {
			if frames, err = s.ckpt.checkpoint(ctx, "PASSIVE"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		before, _ := walState(t, path)
		restarted := false
		for !restarted && writing() {
			s.ckpt.after()
			time.Sleep(time.Millisecond)
			now, _ := walState(t, path)
			restarted = now != before
		}
		_, size := walState(t, path)
		if !restarted {
			t.Fatalf("cycle %d: a checkpoint of %d frames under steady writes, then %d runs, and the WAL did not start over (%d bytes)",
				c, frames, runs.Load(), size)
		}
		t.Logf("cycle %d: %d frames checkpointed, the WAL started over; %d runs so far, %d bytes", c, frames, runs.Load(), size)
	}
}
