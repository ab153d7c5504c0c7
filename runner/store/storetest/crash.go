package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// CrashChildEnv, when set in a test binary's environment, makes its
// TestMain run CrashChild instead of the tests (see Crash).
const CrashChildEnv = "RUNEDGE_STORETEST_CRASH_CHILD"

// CrashChild is the child side of Crash: 16 writers start and finish runs
// on s as fast as they can, printing "start <id>" once StartRun returned
// and "end <id>" once the terminal Transition returned: what the service
// would acknowledge to a client at those points. It runs until killed.
func CrashChild(s runner.Store) {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(what, id string) {
		mu.Lock()
		fmt.Fprintln(out, what, id)
		out.Flush()
		mu.Unlock()
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				r := newRun("acme", runner.StatusRunning)
				r.SessionID, r.ThreadID = runner.NewID(contract.SessionPrefix), runner.NewID(contract.ThreadPrefix)
				if err := s.StartRun(ctx, r, true, true); err != nil {
					fmt.Fprintln(os.Stderr, "StartRun:", err)
					os.Exit(3)
				}
				say("start", r.ID)
				if err := s.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(2), Output: "out " + r.ID}); err != nil {
					fmt.Fprintln(os.Stderr, "Transition:", err)
					os.Exit(3)
				}
				say("end", r.ID)
			}
		})
	}
	wg.Wait()
}

// Crash checks that a process killed (SIGKILL) while group commit batches
// are in flight loses no acknowledged write. It runs the current test
// binary as a child with CrashChildEnv and env (which must let the
// child's TestMain open the same store), lets it acknowledge at least 500
// writes, kills it, and checks with reopen that every run whose start was
// acknowledged exists and every run whose end was acknowledged is
// completed with its output.
func Crash(t *testing.T, env []string, reopen func(t *testing.T) runner.Store) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), CrashChildEnv+"=1"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started, ended := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(60 * time.Second)
	for len(started)+len(ended) < 500 && sc.Scan() {
		what, id, _ := strings.Cut(sc.Text(), " ")
		if what == "start" {
			started[id] = true
		} else {
			ended[id] = true
		}
		if time.Now().After(deadline) {
			break
		}
	}
	// Kill mid-stream: batches are being written right now.
	cmd.Process.Signal(syscall.SIGKILL)
	// Acknowledgements already written to the pipe count too.
	for sc.Scan() {
		what, id, _ := strings.Cut(sc.Text(), " ")
		if what == "start" {
			started[id] = true
		} else {
			ended[id] = true
		}
	}
	cmd.Wait()
	if len(started) < 100 {
		t.Fatalf("child acknowledged only %d starts before dying: %s", len(started), stderr.String())
	}
	s := reopen(t)
	lost := 0
	for id := range started {
		r, err := s.GetRun(t.Context(), "", id)
		switch {
		case err != nil:
			lost++
			t.Errorf("acknowledged start of %s lost: %v", id, err)
		case ended[id] && (r.Status != runner.StatusCompleted || r.Output != "out "+id):
			lost++
			t.Errorf("acknowledged end of %s lost: %s %q", id, r.Status, r.Output)
		}
	}
	t.Logf("child killed after %d acknowledged starts and %d ends; %d lost", len(started), len(ended), lost)
}
