package sqlite

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// keepGOMAXPROCS restores the test process's GOMAXPROCS after t.
func keepGOMAXPROCS(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
}

// A process on one P gets a second one while a hold lasts, holds overlap,
// and the last release gives the runtime its one P back; a process on
// more Ps, or whose GOMAXPROCS the environment sets, is left alone.
func TestSparePOnlyForAProcessOnOneP(t *testing.T) {
	keepGOMAXPROCS(t)
	want := func(step string, n int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != n {
			t.Fatalf("%s: GOMAXPROCS %d, want %d", step, got, n)
		}
	}
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(1)
	a := holdSpareP()
	want("first hold", 2)
	b := holdSpareP()
	want("second hold", 2)
	a()
	want("one hold left", 2)
	b()
	// The last release gives the runtime its default back (under `go
	// test`, the machine's CPUs, not the 1 this test set by hand).
	if spare.users != 0 || spare.raised {
		t.Fatalf("after the last release: users %d, raised %v", spare.users, spare.raised)
	}

	runtime.GOMAXPROCS(3)
	c := holdSpareP()
	want("a hold on 3 Ps", 3)
	c()
	want("released on 3 Ps", 3)

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	d := holdSpareP()
	want("a hold with GOMAXPROCS in the environment", 1)
	d()
	want("released with GOMAXPROCS in the environment", 1)
}

// The checkpointer holds the spare P only while it checkpoints: a store
// on one P that checkpointed many times under writes and closed leaves no
// hold behind.
func TestCheckpointsGiveTheSparePBack(t *testing.T) {
	keepGOMAXPROCS(t)
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(1)
	ctx := t.Context()
	s, err := OpenWith(ctx, filepath.Join(t.TempDir(), "runs.db"), Options{CheckpointEvery: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("run_%d", i)
		if err := s.StartRun(ctx, markRun(id, "h"), false, false); err != nil {
			t.Fatal(err)
		}
		if err := s.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted, Output: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	spare.mu.Lock()
	users, raised := spare.users, spare.raised
	spare.mu.Unlock()
	if users != 0 || raised {
		t.Fatalf("after Close: %d holds of the spare P, raised %v", users, raised)
	}
}
