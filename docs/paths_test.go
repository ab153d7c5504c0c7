package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoPath is a path into the tree written in backquotes: it starts with one
// of the repository's top-level source folders. Braces list alternatives
// (`plugins/runtime/{a,b}.go`) and * is a glob.
var repoPath = regexp.MustCompile("`((?:bench|docs|envoy|examples|filters|host|internal|plugins|runner|scripts)/[A-Za-z0-9_./{},*-]*)`")

// generated are folders the build writes, absent from a fresh checkout
// (as are the .wasm files and their signatures).
var generated = []string{"plugins/build/"}

// TestRepoPathsExist: every file or folder the docs name in backquotes
// exists, so a moved package cannot leave its old path behind in the
// prose. A Go identifier after a package path (`internal/contract.ChainKey`)
// is allowed: the package is what must exist.
//
// A package README may also name a path from its own folder
// (envoy/README.md's `internal/translate`), and every Go file it names
// bare (`storewrap.go`) must be in its folder or below it: that is how its
// table of files goes stale when code moves.
func TestRepoPathsExist(t *testing.T) {
	for _, page := range pages(t) {
		checkPaths(t, page, ".")
	}
	for _, page := range packageREADMEs(t) {
		dir := filepath.Dir(page)
		checkPaths(t, page, ".", dir)
		for _, m := range goFile.FindAllStringSubmatch(prose(read(t, page)), -1) {
			if !below(dir, m[1]) {
				t.Errorf("%s names `%s`, which is not in %s or below it", page, m[1], dir)
			}
		}
	}
}

// goFile is a Go file named without a folder.
var goFile = regexp.MustCompile("`([A-Za-z0-9_]+\\.go)`")

// checkPaths reports every backquoted repository path of page that exists
// under none of bases.
func checkPaths(t *testing.T, page string, bases ...string) {
	t.Helper()
	for _, m := range repoPath.FindAllStringSubmatch(prose(read(t, page)), -1) {
		if isGenerated(m[1]) {
			continue
		}
		for _, p := range expand(m[1]) {
			found := false
			for _, b := range bases {
				found = found || exists(filepath.Join(b, p))
			}
			if !found {
				t.Errorf("%s names `%s`: %s does not exist", page, m[1], p)
			}
		}
	}
}

// below reports whether a file of that name is in dir or a folder under it.
func below(dir, name string) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// prose drops fenced code blocks, whose commands and output are not
// references to files.
func prose(s string) string {
	var b strings.Builder
	inCode := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func isGenerated(p string) bool {
	if strings.HasSuffix(p, ".wasm") || strings.HasSuffix(p, ".wasm.sig") {
		return true
	}
	for _, g := range generated {
		if strings.HasPrefix(p, g) {
			return true
		}
	}
	return false
}

// expand turns `a/{b,c}.go` into a/b.go and a/c.go (one level of braces).
func expand(p string) []string {
	open := strings.IndexByte(p, '{')
	end := strings.IndexByte(p, '}')
	if open < 0 || end < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expand(p[:open]+alt+p[end+1:])...)
	}
	return out
}

// exists reports whether a path (or glob) names something in the tree, or
// is a package path followed by .Identifier.
func exists(p string) bool {
	p = strings.TrimSuffix(p, "/")
	if strings.ContainsAny(p, "*") {
		m, _ := filepath.Glob(filepath.Join(root, p))
		return len(m) > 0
	}
	if _, err := os.Stat(filepath.Join(root, p)); err == nil {
		return true
	}
	dir, ident, ok := cutLastDot(p)
	if !ok || ident == "" || !isUpper(ident[0]) {
		return false
	}
	st, err := os.Stat(filepath.Join(root, dir))
	return err == nil && st.IsDir()
}

func cutLastDot(p string) (string, string, bool) {
	slash := strings.LastIndexByte(p, '/')
	dot := strings.IndexByte(p[slash+1:], '.')
	if dot < 0 {
		return "", "", false
	}
	return p[:slash+1+dot], p[slash+1+dot+1:], true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// packageREADMEs are the README.md files of the tree's folders, which name
// their files and their neighbours' the same way.
func packageREADMEs(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "incoming") {
			return filepath.SkipDir
		}
		if d.Name() == "README.md" && filepath.Dir(path) != root {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
