// Package docs_test checks the user documentation against the tree: the
// tests, benchmarks and files it names exist (in the package it names, for a
// test), its links resolve, every route of internal/httproute and every error
// code of the catalog is in the API's tables, and the README stays a front
// door. The package READMEs are held to the same paths and test names.
// (Every configuration field is checked in host/config.)
package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this folder.
const root = ".."

// pages are the documents checked: the front door, the rationale and the
// user docs (docs/incoming holds drafts and is not checked).
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md", "RATIONALE.md"}
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md {
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEIsAFrontDoor: short, and the two commands CI runs appear as
// written.
func TestREADMEIsAFrontDoor(t *testing.T) {
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; at most 250 (move detail into docs/)", n)
	}
	for _, cmd := range []string{"make run", "make test"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md does not show %q", cmd)
		}
	}
}

// testName is a Go test, fuzz target or benchmark named in backquotes,
// optionally with a sub-benchmark or a trailing * (a prefix).
var testName = regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)(\\*|/[^`]*)?`")

// TestNamedTestsExist: every test, fuzz target and benchmark the docs and
// the package READMEs name is a function of a _test.go file in the tree.
func TestNamedTestsExist(t *testing.T) {
	funcs := testFuncs(t)
	for _, page := range append(pages(t), packageREADMEs(t)...) {
		for _, m := range testName.FindAllStringSubmatch(read(t, page), -1) {
			name, prefix := m[1], m[2] == "*"
			if !funcs[name] && !(prefix && anyPrefixed(funcs, name)) {
				t.Errorf("%s names %s, which no _test.go file defines", page, m[0])
			}
		}
	}
}

// TestSecurityPromisesHaveTests: every row of the promises table names at
// least one test.
func TestSecurityPromisesHaveTests(t *testing.T) {
	rows := tableRows(t, "docs/security.md", "| promise | checked by |")
	for _, line := range rows {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !testName.MatchString(cells[len(cells)-2]) {
			t.Errorf("docs/security.md: a promise without a test: %.80s…", line)
		}
	}
	if len(rows) < 10 {
		t.Errorf("docs/security.md: found %d promises; the table's header changed?", len(rows))
	}
}

// tableRows returns the body rows of the table of page whose header line
// starts with header.
func tableRows(t *testing.T, page, header string) []string {
	t.Helper()
	var rows []string
	in := false
	for _, line := range strings.Split(read(t, page), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "|---"):
			rows = append(rows, line)
		}
	}
	return rows
}

// link is a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksResolve: relative links point at files that exist, and anchors
// into Markdown files at headings they have.
func TestLinksResolve(t *testing.T) {
	for _, page := range pages(t) {
		for _, m := range link.FindAllStringSubmatch(read(t, page), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
			}
			if _, err := os.Stat(filepath.Join(root, file)); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !headings(t, file)[anchor] {
				t.Errorf("%s links to %s: %s has no such heading", page, target, file)
			}
		}
	}
}

// headings returns the GitHub anchors of a Markdown file's headings.
func headings(t *testing.T, rel string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(read(t, rel), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// errorRow is a row of the API's error table: | `code` | status | type | …
var errorRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| (\\d{3})")

// TestErrorCatalogDocumented: every code constant of filters/apierr is in
// docs/api.md's error table, and every code of the table is written in the
// Go source (no code the server never sends).
func TestErrorCatalogDocumented(t *testing.T) {
	documented := map[string]bool{}
	for _, line := range strings.Split(read(t, "docs/api.md"), "\n") {
		if m := errorRow.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
		}
	}
	codes := apierrCodes(t)
	if len(codes) == 0 {
		t.Fatal("no Code… constants found in filters/apierr: the catalog moved; teach this test where it is")
	}
	for name, code := range codes {
		if !documented[code] {
			t.Errorf("docs/api.md's error table lacks %q (apierr.%s)", code, name)
		}
	}
	literals, written := goStrings(t)
	for code := range written {
		if !documented[code] {
			t.Errorf("docs/api.md's error table lacks %q, an error code written outside the catalog", code)
		}
	}
	for code := range documented {
		if !literals[code] {
			t.Errorf("docs/api.md documents error code %q, which no Go source file writes", code)
		}
	}
}

// apierrCodes returns the string constants named Code… of filters/apierr.
func apierrCodes(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(root, "filters", "apierr", "*.go"))
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out[id.Name] = s
					}
				}
			}
			return true
		})
	}
	return out
}

// goStrings returns every string literal of the non-test Go files under
// filters/, host/ and runner/, and the error codes among them written in
// place: the code argument of apierr.New, or a literal Code field.
func goStrings(t *testing.T) (literals, codes map[string]bool) {
	t.Helper()
	out, codes := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{"filters", "host", "runner"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if s, ok := stringLit(n); ok {
						out[s] = true
					}
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && len(n.Args) == 4 {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "apierr" {
							if s, ok := stringLit(n.Args[2]); ok {
								codes[s] = true
							}
						}
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Code" {
						if s, ok := stringLit(n.Value); ok {
							codes[s] = true
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, codes
}

// stringLit is the value of a string literal expression.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// testFuncs returns the names of the Test, Fuzz and Benchmark functions of
// every _test.go file in the tree.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for name := range testDirs(t) {
		out[name] = true
	}
	return out
}

func anyPrefixed(funcs map[string]bool, prefix string) bool {
	for name := range funcs {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
