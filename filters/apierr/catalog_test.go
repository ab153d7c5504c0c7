package apierr

import (
	"fmt"
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
// code is a constant here, with its row in the catalog. Nor is an error
// given a status or type there: it is built from its code alone
// (apierr.New, Param), and the catalog gives them.
func TestErrorsBuiltFromCodes(t *testing.T) {
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
			case *ast.CallExpr: // apierr.New(code, msg), apierr.Param(code, param, msg)
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "New" || sel.Sel.Name == "Param") && isIdent(sel.X, "apierr") && len(n.Args) > 0 {
					lit = n.Args[0]
				}
			case *ast.CompositeLit: // apierr.Error{Status: …}: the catalog's to say
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" && isIdent(sel.X, "apierr") {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && (isIdent(kv.Key, "Status") || isIdent(kv.Key, "Type")) {
							t.Errorf("%s: an apierr.Error given its status or type; build it from its code (apierr.New), which takes them from the catalog", fset.Position(kv.Pos()))
						}
					}
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

// apiDoc is the user docs' API page; its error table lists every error.
const apiDoc = "../../docs/api.md"

// docsErrorRow is a row of its error table: | `code` | status … | type | when |
var docsErrorRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| (\\d{3})[^|]*\\| `?([a-z_]+)`? \\|")

// The error table of docs/api.md lists exactly the catalog's rows: each
// code with the status and type it is sent with.
func TestDocsErrorTableMatchesCatalog(t *testing.T) {
	b, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := docsErrorRow.FindStringSubmatch(line); m != nil {
			documented[m[2]+" "+m[3]+" "+m[1]] = true
		}
	}
	want := map[string]bool{}
	for _, e := range Catalog {
		row := fmt.Sprintf("%d %s %s", e.Status, e.Type, e.Code)
		want[row] = true
		if !documented[row] {
			t.Errorf("%s's error table lacks %s (status type code), a row of the catalog: %s", apiDoc, row, e.When)
		}
	}
	for row := range documented {
		if !want[row] {
			t.Errorf("%s's error table has %s (status type code), which the catalog does not", apiDoc, row)
		}
	}
}
