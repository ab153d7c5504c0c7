package jsonfast

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/jsondepth"
)

// FuzzUnquoteLen holds unquoteLen to unquoteAppend (the length and form of
// what it writes, and where it fails), and PendingLiteral to
// StringLiteralMarshaled: a pending literal is one StringLiteral hands
// back, of an escaped text as long as the text it reads, with the same
// marshaled form.
func FuzzUnquoteLen(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
		f.Add(s + `<` + s)
	}
	for _, s := range []string{`\u0000`, `\u00E9`, `caf\u00e9 \ud83d\ude00`, "\xff\\n", `\u2028`, "\u2028\\n", `\/`, `a&b\n`, `x\u003cy`, `\ud800\udc00`, `\udc00\ud800`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wform, wok := unquoteAppend(nil, s)
		n, form, ok := unquoteLen(s)
		if ok != wok || ok && (n != len(want) || form != wform) {
			t.Fatalf("unquoteLen(%q) = %d, %d, %v; unquoteAppend %d bytes, %d, %v", s, n, form, ok, len(want), wform, wok)
		}
		doc := `"` + s + `"`
		var js string
		if json.Unmarshal([]byte(doc), &js) != nil {
			return // not a string a validated document holds
		}
		pn, pmarshaled, pok := PendingLiteral(Value(doc))
		var text string
		lit, marshaled, lok := StringLiteralMarshaled(Value(doc), &text)
		wantPending := lok && lit != "" && containsBackslash(s)
		if pok != wantPending {
			t.Fatalf("PendingLiteral(%s) = %v, want %v (literal %q)", doc, pok, wantPending, lit)
		}
		if pok && (pn != len(text) || pmarshaled != marshaled || text != js || !utf8.ValidString(text)) {
			t.Fatalf("PendingLiteral(%s) = %d, %v; the text %q (%d bytes), marshaled %v", doc, pn, pmarshaled, text, len(text), marshaled)
		}
	})
}

func containsBackslash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

// BenchmarkPendingAgent is what keeping the agent history's texts pending
// costs (PendingLiteral of each), beside BenchmarkArenaAgent's unescaping
// of the same texts.
func BenchmarkPendingAgent(b *testing.B) {
	lits := agentTexts()
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		for _, l := range lits {
			if _, _, ok := PendingLiteral(l); !ok {
				b.Fatal(l)
			}
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// FuzzPlainPendingLiteral holds PlainPendingLiteral to PendingLiteral on
// any string that jsondepth.ValidPlain finds plain.
func FuzzPlainPendingLiteral(f *testing.F) {
	for _, s := range []string{`a\"b`, `\\\\`, `\\\"\\n`, `x\\`, `<a>\n&`, `\b\f\n\r\t`, `plain`, "\x7f\\t", `\\\\\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := `"` + s + `"`
		if valid, plain := jsondepth.ValidPlain([]byte(doc), 8, nil); !valid || !plain {
			return
		}
		n, marshaled, ok := PlainPendingLiteral(Value(doc))
		wn, wmarshaled, wok := PendingLiteral(Value(doc))
		if n != wn || marshaled != wmarshaled || ok != wok {
			t.Fatalf("PlainPendingLiteral(%s) = %d, %v, %v; PendingLiteral %d, %v, %v", doc, n, marshaled, ok, wn, wmarshaled, wok)
		}
	})
}
