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
// on s as fast as they can, printing "start <id> <writer>" once StartRun
// returned and "end <id> <writer>" once the terminal Transition returned:
// what the service would acknowledge to a client at those points. One run
// in eight pauses (waiting) and resumes before it ends. A writer ends a
// run only after its next run's start was acknowledged, so that whenever
// it is killed the last run it acknowledged is running, with no write of
// it begun: a run recovery must find. It first recovers its host, as a
// service starting does, and runs until killed.
func CrashChild(s runner.Store) {
	ctx := context.Background()
	if _, err := s.MarkInterrupted(ctx, crashHost, 1); err != nil {
		fmt.Fprintln(os.Stderr, "MarkInterrupted:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(what, id string, w int) {
		mu.Lock()
		fmt.Fprintln(out, what, id, w)
		out.Flush()
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			prev := ""
			for i := 0; ; i++ {
				r := newRun("acme", runner.StatusRunning)
				r.SessionID, r.ThreadID = runner.NewID(contract.SessionPrefix), runner.NewID(contract.ThreadPrefix)
				r.HostID = crashHost
				if err := s.StartRun(ctx, r, true, true); err != nil {
					fmt.Fprintln(os.Stderr, "StartRun:", err)
					os.Exit(3)
				}
				say("start", r.ID, w)
				if prev != "" {
					if i%8 == 0 {
						for _, st := range []runner.Status{runner.StatusWaiting, runner.StatusRunning} {
							if err := s.Transition(ctx, prev, runner.Transition{Status: st}); err != nil {
								fmt.Fprintln(os.Stderr, "Transition:", err)
								os.Exit(3)
							}
						}
					}
					if err := s.Transition(ctx, prev, runner.Transition{Status: runner.StatusCompleted, EndedAt: ptr(2), Output: "out " + prev}); err != nil {
						fmt.Fprintln(os.Stderr, "Transition:", err)
						os.Exit(3)
					}
					say("end", prev, w)
				}
				prev = r.ID
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
// completed with its output, and that start-up recovery fails every run
// the child left live, among them each writer's last acknowledged start.
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
	// last is each writer's last acknowledged start: running when the
	// child died, since a writer ends a run only after its next start.
	last := map[string]string{}
	read := func(line string) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Errorf("crash child wrote %q", line)
			return
		}
		if f[0] == "start" {
			started[f[1]] = true
			last[f[2]] = f[1]
		} else {
			ended[f[1]] = true
		}
	}
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(60 * time.Second)
	for len(started)+len(ended) < 500 && sc.Scan() {
		read(sc.Text())
		if time.Now().After(deadline) {
			break
		}
	}
	// Kill mid-stream: batches are being written right now.
	cmd.Process.Signal(syscall.SIGKILL)
	// Acknowledgements already written to the pipe count too.
	for sc.Scan() {
		read(sc.Text())
	}
	cmd.Wait()
	if len(started) < 100 {
		t.Fatalf("child acknowledged only %d starts before dying: %s", len(started), stderr.String())
	}
	s := reopen(t)
	// Start-up recovery, as the next process of the host runs it: every
	// run the child left live is found.
	interrupted, err := s.MarkInterrupted(t.Context(), crashHost, 3)
	if err != nil {
		t.Fatal(err)
	}
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
		case r.Status == runner.StatusQueued || r.Status == runner.StatusRunning:
			t.Errorf("run %s left %s after recovery", id, r.Status)
		}
	}
	for _, st := range []runner.Status{runner.StatusQueued, runner.StatusRunning} {
		if runs, _, err := s.ListRuns(t.Context(), runner.ListQuery{Status: st, Limit: 1}); err != nil || len(runs) != 0 {
			t.Errorf("%d runs %s after recovery (%v)", len(runs), st, err)
		}
	}
	for w, id := range last {
		if r, err := s.GetRun(t.Context(), "", id); err == nil && (r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted) {
			t.Errorf("writer %s's last acknowledged start %s is %s (%s) after recovery; want failed (interrupted)", w, id, r.Status, r.StatusReason)
		}
	}
	if interrupted < int64(len(last)) {
		t.Errorf("recovery failed %d runs; each of the %d writers that acknowledged a start left one running", interrupted, len(last))
	}
	t.Logf("child killed after %d acknowledged starts and %d ends; %d lost; %d live runs recovered", len(started), len(ended), lost, interrupted)
}

// crashHost is the crash child's host id.
const crashHost = "host-crash"
