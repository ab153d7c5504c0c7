package golden

import (
	"path/filepath"
	"strings"
	"testing"
)

// A file that matches passes; one that differs fails naming the line; a
// missing one fails.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "a.txt")
	*update = true
	Check(t, p, []byte("one\ntwo\n"))
	*update = false
	Check(t, p, []byte("one\ntwo\n"))
	for _, got := range []string{"one\nthree\n", ""} {
		ft := &fakeT{TB: t}
		Check(ft, p, []byte(got))
		if !ft.failed {
			t.Errorf("%q: no failure", got)
		}
	}
	ft := &fakeT{TB: t}
	func() { defer func() { _ = recover() }(); Check(ft, filepath.Join(dir, "missing"), nil) }()
	if !ft.failed {
		t.Error("missing file: no failure")
	}
	if d := Diff("one\ntwo\n", "one\nthree\n"); !strings.Contains(d, "line 2:\n- two\n+ three") {
		t.Errorf("Diff: %q", d)
	}
}

// fakeT records a failure instead of failing the test; Fatalf stops the
// call by panicking, as FailNow's Goexit would.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
