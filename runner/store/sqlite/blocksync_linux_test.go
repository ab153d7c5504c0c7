//go:build linux

package sqlite

import (
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/runedge/runedge/runner/store/storetest"
)

// spin keeps the P busy for d without a system call, so the runtime's
// monitor backs off to its 10 ms rounds, as in a host under steady load.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// With one P, a goroutine made runnable just before another enters a
// blocking call runs at once: blockingSyscall hands the P to another
// thread before the call. With syscall.Syscall's semantics it waited until
// the monitor took the P, 10–20 ms on its slow rounds.
func TestBlockingSyscallGivesUpTheP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	best := time.Hour
	for range 5 {
		// A timer wakes the monitor should it sleep (all Ps idle), without
		// resetting its rounds to the fast ones a system call would.
		time.AfterFunc(time.Millisecond, func() {})
		spin(60 * time.Millisecond)
		// A time slice of its own (a slice over 10 ms old would have the
		// monitor take the P at its first look, whatever the call).
		runtime.Gosched()
		started := make(chan time.Time, 1)
		done := make(chan struct{})
		go func() {
			ts := &syscall.Timespec{Nsec: int64(60 * time.Millisecond)}
			started <- time.Now() // makes the test's goroutine runnable
			blockingSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(ts)), 0, 0)
			runtime.KeepAlive(ts)
			close(done)
		}()
		t0 := <-started
		best = min(best, time.Since(t0))
		<-done
	}
	t.Logf("best wait %v", best)
	if best > 5*time.Millisecond {
		t.Errorf("a runnable goroutine waited %v for the P of one in a blocking call (best of 5), want it at once", best)
	}
}

// The store's syncs, the checkpointer's and the writer's, go through
// fsyncBlocking: the WAL's and the database file's.
func TestCheckpointSyncsGiveUpTheP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(t.Context(), path, Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	write := func() {
		for range 5 {
			if err := s.StartRun(t.Context(), storetest.BenchOwnRun(), false, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first sync of a connection's WAL is the unix VFS's own: it also
	// syncs the directory of a log just created (UNIXFILE_DIRSYNC).
	// Each checkpoint as the checkpointer's tick makes it: the writer's
	// kept read lock let go first (walvfs.go), or the checkpoint stops at
	// its mark.
	write()
	s.ckpt.before()
	if _, err := s.ckpt.checkpoint(t.Context(), "PASSIVE"); err != nil {
		t.Fatal(err)
	}
	write()
	n0 := blockingSyncs.Load()
	s.ckpt.before()
	if _, err := s.ckpt.checkpoint(t.Context(), "PASSIVE"); err != nil {
		t.Fatal(err)
	}
	if n := blockingSyncs.Load() - n0; n < 2 {
		t.Errorf("a checkpoint made %d syncs through fsyncBlocking, want 2 (the WAL, then the database)", n)
	}
}
