package apierr

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every code constant has its row in the catalog, and every row's code is
// one of them.
func TestCatalogHoldsEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "apierr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{} // value → constant
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if strings.HasPrefix(n.Name, "Code") {
					v, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
					codes[v] = n.Name
				}
			}
		}
	}
	inCatalog := map[string]bool{}
	seen := map[string]bool{}
	for _, e := range Catalog {
		key := fmt.Sprint(e.Status, e.Code)
		if seen[key] {
			t.Errorf("catalog: %s twice", key)
		}
		seen[key] = true
		inCatalog[e.Code] = true
		if codes[e.Code] == "" {
			t.Errorf("catalog: code %q is not a constant", e.Code)
		}
		if e.Type == "" || e.Status < 400 || e.When == "" {
			t.Errorf("catalog: row %+v is incomplete", e)
		}
	}
	for v, name := range codes {
		if !inCatalog[v] {
			t.Errorf("%s (%q) has no row in Catalog", name, v)
		}
	}
	for _, o := range outcomes {
		if !inCatalog[o.code] {
			t.Errorf("runner outcome %v maps to %q, which is not in the catalog", o.err, o.code)
		}
	}
}

// No error code is written as a string literal outside this package: a
// code is a constant here, with its row in the catalog.
func TestNoCodeLiteralsOutsideApierr(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "examples", "testdata", "node_modules", ".git", "apierr":
				return filepath.SkipDir // examples: programs of their own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var lit ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr: // apierr.New(status, type, code, msg)
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && isIdent(sel.X, "apierr") && len(n.Args) == 4 {
					lit = n.Args[2]
				}
			case *ast.KeyValueExpr: // apierr.Error{Code: …}
				if isIdent(n.Key, "Code") {
					lit = n.Value
				}
			}
			if b, ok := lit.(*ast.BasicLit); ok && b.Kind == token.STRING {
				t.Errorf("%s: error code %s written as a literal; use an apierr.Code constant", fset.Position(b.Pos()), b.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// errorTableHeader opens the user docs' error table.
const errorTableHeader = "| status | type | code | when |"

// The error table of the user docs (wherever under docs/ it lives) lists
// exactly the catalog's rows.
func TestDocsErrorTableMatchesCatalog(t *testing.T) {
	var rows []string
	var where string
	err := filepath.WalkDir(filepath.Join("..", "..", "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, table, ok := strings.Cut(string(b), errorTableHeader+"\n")
		if !ok {
			return nil
		}
		if where != "" {
			t.Errorf("two error tables: %s and %s", where, path)
		}
		where = path
		for _, line := range strings.Split(table, "\n")[1:] { // past the |---| line
			if !strings.HasPrefix(line, "|") {
				break
			}
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				t.Errorf("%s: row %q", path, line)
				continue
			}
			rows = append(rows, strings.TrimSpace(cells[1])+" "+strings.Trim(strings.TrimSpace(cells[2]), "`")+" "+strings.Trim(strings.TrimSpace(cells[3]), "`"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if where == "" {
		t.Fatalf("no error table (a table under the header %q) in docs/; it should read:\n%s", errorTableHeader, docsTable())
	}
	var want []string
	for _, e := range Catalog {
		want = append(want, fmt.Sprintf("%d %s %s", e.Status, e.Type, e.Code))
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s's error table has rows\n%s\nthe catalog (in its order)\n%s\nit should read:\n%s", where,
			strings.Join(rows, "\n"), strings.Join(want, "\n"), docsTable())
	}
}

// docsTable is the error table as the docs should have it.
func docsTable() string {
	var b strings.Builder
	b.WriteString(errorTableHeader + "\n|---|---|---|---|\n")
	for _, e := range Catalog {
		fmt.Fprintf(&b, "| %d | `%s` | `%s` | %s |\n", e.Status, e.Type, e.Code, e.When)
	}
	return b.String()
}
