package sysmon

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string // nil: nothing to do
	}{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin", "GODEBUG=" + Setting}},
		{[]string{"GODEBUG=", "A=b"}, []string{"GODEBUG=" + Setting, "A=b"}},
		{[]string{"GODEBUG=http2client=0", "A=b"}, []string{"GODEBUG=http2client=0," + Setting, "A=b"}},
		// The operator's schedtrace, whatever its value, is kept.
		{[]string{"GODEBUG=schedtrace=0"}, nil},
		{[]string{"GODEBUG=madvdontneed=1, schedtrace=1000"}, nil},
		// After the process ran itself again.
		{[]string{"PATH=/bin", "GODEBUG=" + Setting}, nil},
		// A variable that only ends like GODEBUG is not it.
		{[]string{"XGODEBUG=schedtrace=0"}, []string{"XGODEBUG=schedtrace=0", "GODEBUG=" + Setting}},
	} {
		got, ok := Env(c.in)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("Env(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

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
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no execve")
	}
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
