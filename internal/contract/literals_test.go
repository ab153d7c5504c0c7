package contract

import (
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

// The literals only this package may write: the id prefixes (a literal
// ending in one builds or parses ids, "msg_" or `{"id":"resp_`), and the
// endpoint and stage names no other word shares.
var (
	prefixes = []string{RunPrefix, ThreadPrefix, SessionPrefix, ConversationPrefix, ResponsePrefix,
		CompletionPrefix, MessagePrefix, CallPrefix, ReasoningPrefix, CompactionPrefix}
	names = []string{EndpointChat, EndpointCompact, EndpointInputTokens,
		StageMapRequest, StageNativeRequest, StageCompactInput}
)

// TestNoContractLiteralsElsewhere fails when a Go file of the module, tests
// aside, spells a prefix or one of those names itself instead of taking it
// from this package: the second copy is where the contract drifts. Tests
// (and the test-support packages) keep their literals on purpose: they
// check the wire as a client sees it.
func TestNoContractLiteralsElsewhere(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	self, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "artifacts", "bin", "build":
				return filepath.SkipDir
			}
			// This package, and the packages that only serve tests
			// (storetest, filtertest, …), whose ids are test data.
			if path == self || strings.HasSuffix(d.Name(), "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if what := contractLiteral(s); what != "" {
				rel, _ := filepath.Rel(root, fset.Position(lit.Pos()).Filename)
				t.Errorf("%s:%d: %s spells %s; take it from internal/contract", rel, fset.Position(lit.Pos()).Line, lit.Value, what)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under %s: the walk missed the tree", files, root)
	}
}

// contractLiteral names the contract literal s is, "" for none.
func contractLiteral(s string) string {
	for _, p := range prefixes {
		if strings.HasSuffix(s, p) && (len(s) == len(p) || !isIDChar(s[len(s)-len(p)-1])) {
			return "the id prefix " + strconv.Quote(p)
		}
	}
	for _, n := range names {
		if s == n {
			return "the name " + strconv.Quote(n)
		}
	}
	return ""
}

func isIDChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// The scan recognises what it must refuse and lets other words be.
func TestContractLiteral(t *testing.T) {
	for _, s := range []string{"resp_", "msg_", "chatcmpl-", `{"id":"resp_`, "fc_", "sess_", "chat.completions", "map-request"} {
		if contractLiteral(s) == "" {
			t.Errorf("contractLiteral(%q) = \"\", want it refused", s)
		}
	}
	for _, s := range []string{"", "resp_1", "max_run_", "reasoning", "chat", "map_request", "responses.stored", "is_msg_"} {
		if got := contractLiteral(s); got != "" {
			t.Errorf("contractLiteral(%q) = %q, want none", s, got)
		}
	}
}
