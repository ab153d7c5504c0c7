package docs_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testsInPackage is a run of test names followed by the package they are
// in: "`TestA`, `TestB` (host/server: real HTTP)".
var testsInPackage = regexp.MustCompile("((?:`(?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*`(?:, | and | or )?)+) \\(((?:bench|envoy|examples|filters|host|internal|plugins|runner)(?:/[a-z0-9_]+)*)[):;, ]")

// TestNamedTestsInTheirPackage: a test the docs place in a package
// ("`TestX` (host/server)") is defined in that folder, so moving a test
// with its code does not leave the docs pointing at the old room.
func TestNamedTestsInTheirPackage(t *testing.T) {
	dirs := testDirs(t)
	for _, page := range append(pages(t), packageREADMEs(t)...) {
		for _, m := range testsInPackage.FindAllStringSubmatch(prose(read(t, page)), -1) {
			for _, name := range testName.FindAllStringSubmatch(m[1], -1) {
				if name[2] != "" {
					continue // a prefix or a sub-benchmark
				}
				if in := dirs[name[1]]; in != nil && !in[m[2]] {
					t.Errorf("%s places %s in %s; it is defined in %s", page, name[1], m[2], keys(in))
				}
			}
		}
	}
}

// testDirs maps each Test, Fuzz and Benchmark function to the folders of
// the _test.go files that define it.
func testDirs(t *testing.T) map[string]map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`^func ((?:Test|Fuzz|Benchmark)\w*)\(`)
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if m := decl.FindStringSubmatch(sc.Text()); m != nil {
				if out[m[1]] == nil {
					out[m[1]] = map[string]bool{}
				}
				out[m[1]][filepath.ToSlash(rel)] = true
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}
