package docs_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestEveryFuzzTargetRuns: every fuzz target in the tree is in the
// Makefile's FUZZ_TARGETS, with the package it is defined in, so `make
// fuzz-short` (and so `make test`) runs it; and every entry there names a
// target that exists.
func TestEveryFuzzTargetRuns(t *testing.T) {
	m := regexp.MustCompile(`(?m)^FUZZ_TARGETS\s*:=\s*(.*)$`).FindStringSubmatch(read(t, "Makefile"))
	if m == nil {
		t.Fatal("Makefile: no FUZZ_TARGETS line")
	}
	listed := map[string]bool{}
	for _, e := range strings.Fields(m[1]) {
		listed[e] = true
	}
	defined := map[string]bool{}
	for name, dirs := range testDirs(t) {
		if !strings.HasPrefix(name, "Fuzz") {
			continue
		}
		for dir := range dirs {
			e := "./" + dir + ":" + name
			defined[e] = true
			if !listed[e] {
				t.Errorf("%s is not in the Makefile's FUZZ_TARGETS: make fuzz-short does not run it", e)
			}
		}
	}
	for e := range listed {
		if !defined[e] {
			t.Errorf("the Makefile's FUZZ_TARGETS names %s, which no _test.go file there defines", e)
		}
	}
}
