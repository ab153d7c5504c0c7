package sysmon

import (
	"slices"
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
