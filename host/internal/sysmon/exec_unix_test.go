//go:build unix

package sysmon

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// helperEnv marks the test binary run as the process that calls Exec.
const helperEnv = "SYSMON_TEST_HELPER"

// TestMain runs the test binary as the process that calls Exec when
// TestExecRunsItselfAgain starts it so: it prints its pid and GODEBUG.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		if err := Exec(); err != nil {
			fmt.Println("exec:", err)
			os.Exit(1)
		}
		fmt.Printf("pid=%d godebug=%s\n", os.Getpid(), os.Getenv("GODEBUG"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestExecRunsItselfAgain: the process that calls Exec goes on as the same
// process, with the setting in GODEBUG, and the operator's other GODEBUG
// settings kept.
func TestExecRunsItselfAgain(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") }),
		helperEnv+"=1", "GODEBUG=madvdontneed=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	want := fmt.Sprintf("pid=%d godebug=madvdontneed=1,%s\n", cmd.Process.Pid, Setting)
	if string(out) != want {
		t.Fatalf("helper printed %q, want %q", out, want)
	}
}
