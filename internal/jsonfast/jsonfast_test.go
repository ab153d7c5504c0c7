package jsonfast

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
)

// TestReadersMatchJSON: each reader, given a value's text, reads what
// encoding/json reads into the same field, or says it cannot be sure;
// never a different value.
func TestReadersMatchJSON(t *testing.T) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"\u00e9"`, `""`, `null`, `0`, `-12`, `123456789012345678`,
		`1.5`, `1e3`, `true`, `false`, `[]`, `[ ]`, "[\n\t]", `[1]`, `{}`, `{"a":1}`} {
		v := Doc(" " + s + "\n")
		var gs, js string
		if String(v, &gs) {
			if err := json.Unmarshal([]byte(s), &js); err != nil || gs != js {
				t.Errorf("String(%s) = %q, encoding/json %q (%v)", s, gs, js, err)
			}
		}
		var gi, ji int
		if Int(v, &gi) {
			if err := json.Unmarshal([]byte(s), &ji); err != nil || gi != ji {
				t.Errorf("Int(%s) = %d, encoding/json %d (%v)", s, gi, ji, err)
			}
		}
		var gb, jb bool
		if Bool(v, &gb) {
			if err := json.Unmarshal([]byte(s), &jb); err != nil || gb != jb {
				t.Errorf("Bool(%s) = %v, encoding/json %v (%v)", s, gb, jb, err)
			}
		}
		var ja []struct{}
		if Empty(v) {
			if err := json.Unmarshal([]byte(s), &ja); err != nil || len(ja) != 0 {
				t.Errorf("Empty(%s), encoding/json %v (%v)", s, ja, err)
			}
		}
	}
	for _, s := range []string{`[ ]`, "[\n]", `null`} {
		if !Empty(Doc(s)) {
			t.Errorf("Empty(%s) = false", s)
		}
	}
	for _, s := range []string{`[1]`, `[[]]`, `{}`, `""`} {
		if Empty(Doc(s)) {
			t.Errorf("Empty(%s) = true", s)
		}
	}
}

// TestArrayAndMembers walks nested objects and arrays, with white space
// wherever JSON allows it, and reuses the destination's array.
func TestArrayAndMembers(t *testing.T) {
	type item struct {
		N    int
		Name string
	}
	doc := Doc(` { "items" : [ { "n" : 1 , "name" : "a" } ,
		{"skip":[1,{"x":"]"}],"n":2,"name":"b}"} ] , "other" : {"n":3} } `)
	var got []item
	ok := Members(doc, []string{"items"}, func(_ int, v Value) bool {
		return Array(v, &got, func(v Value, it *item) bool {
			return Members(v, []string{"n", "name"}, func(i int, v Value) bool {
				if i == 0 {
					return Int(v, &it.N)
				}
				return String(v, &it.Name)
			})
		})
	})
	if !ok || len(got) != 2 || got[0] != (item{1, "a"}) || got[1] != (item{2, "b}"}) {
		t.Fatalf("ok %v, items %+v", ok, got)
	}
	first := &got[0]
	if !Array(Doc(`[{"n":5}]`), &got, func(v Value, it *item) bool {
		return Members(v, []string{"n"}, func(_ int, v Value) bool { return Int(v, &it.N) })
	}) || len(got) != 1 || &got[0] != first || got[0].N != 5 {
		t.Fatalf("reused: %+v", got)
	}
	// Unsure: an element that is not an object, a member given twice, a
	// name that matches only without regard to case, an escaped name.
	for _, s := range []string{`{"items":[1]}`, `{"items":[],"items":[]}`, `{"Items":[]}`, `{"it\u0065ms":[]}`} {
		if Members(Doc(s), []string{"items"}, func(_ int, v Value) bool {
			return Array(v, &got, func(Value, *item) bool { return true })
		}) {
			t.Errorf("%s: read as sure", s)
		}
	}
}

// stringSeeds are strings with every kind of escape encoding/json reads
// and writes, broken UTF-8 and surrogates in and out of pairs.
var stringSeeds = []string{`plain`, `a\"b`, `\u00e9\n\t\r\b\f\/\\`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ud83d\u0041`,
	`\ude00\ud83d`, "caf\xc3\xa9", "bad \xff byte", "\xe2\x80\xa8 \xe2\x80\xa9", `<a href="x">&amp;</a>`, "\x7f", `\u0000\u001f`,
	`\uD83D\uDE00`, "line\\nbreak and \\\"quotes\\\" in code:\\n\\tfunc f() {}"}

// FuzzString holds String to encoding/json: for any text between quotes
// that encoding/json reads as a string, the same string.
func FuzzString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := `"` + s + `"`
		var js string
		if json.Unmarshal([]byte(doc), &js) != nil {
			return
		}
		var gs string
		if !String(Value(doc), &gs) || gs != js {
			t.Errorf("String(%q) = %q, encoding/json %q", doc, gs, js)
		}
		if u, form, ok := unquote(s); !ok || u != js {
			t.Errorf("unquote(%q) = %q, %v; encoding/json %q", s, u, ok, js)
		} else if marshaled, _ := json.Marshal(js); form == marshaledForm && string(marshaled) != doc {
			t.Errorf("unquote(%q) says marshaled; json.Marshal writes %s", s, marshaled)
		}
		// StringLiteral reads the same text, and hands back the literal
		// exactly when every reader reads it so: valid UTF-8 and no lone
		// surrogate, which encoding/json reads as U+FFFD and others keep.
		var ls string
		lit, ok := StringLiteral(Value(doc), &ls)
		if !ok || ls != js {
			t.Errorf("StringLiteral(%q) reads %q, %v; encoding/json %q", doc, ls, ok, js)
		}
		copyable := utf8.ValidString(s) && !loneSurrogate(s)
		if want := map[bool]string{true: doc}[copyable]; lit != want {
			t.Errorf("StringLiteral(%q) = %q, want %q", doc, lit, want)
		}
		// StringLiteralMarshaled says the literal is json.Marshal's form
		// only when it is, byte for byte.
		var ms string
		mlit, marshaled, ok := StringLiteralMarshaled(Value(doc), &ms)
		if !ok || ms != js || mlit != lit {
			t.Errorf("StringLiteralMarshaled(%q) = %q, %q, %v; want %q, %q", doc, mlit, ms, ok, lit, js)
		}
		if want := string(AppendString(nil, js)); marshaled && want != doc {
			t.Errorf("StringLiteralMarshaled(%q) says marshaled; json.Marshal writes %s", doc, want)
		}
	})
}

// loneSurrogate reports whether the escaped text s has a \u escape of a
// surrogate that is not the first of a pair followed by the second.
func loneSurrogate(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++
			continue
		}
		r, _ := strconv.ParseUint(s[i+2:i+6], 16, 32)
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+12 > len(s) || s[i+6:i+8] != `\u` {
				return true
			}
			r2, _ := strconv.ParseUint(s[i+8:i+12], 16, 32)
			if r2 < 0xdc00 || r2 > 0xdfff {
				return true
			}
			i += 6
		}
		i += 5
	}
	return false
}

// FuzzAppendString holds AppendString to json.Marshal, byte for byte.
func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
		var u string
		if json.Unmarshal([]byte(`"`+s+`"`), &u) == nil {
			f.Add(u)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	})
}

// agentText is a message of an agent's history: code, quotes, newlines.
var agentText = strings.Repeat("in file handler.go the function \"serve\" reads the request,\n\tif err != nil {\n\t\treturn\n\t}\n", 6)

func BenchmarkAppendString(b *testing.B) {
	b.SetBytes(int64(len(agentText)))
	buf := make([]byte, 0, 2*len(agentText))
	cpu0 := cputime.Process()
	for b.Loop() {
		buf = AppendString(buf[:0], agentText)
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkString(b *testing.B) {
	q, _ := json.Marshal(agentText)
	v := Value(q)
	b.SetBytes(int64(len(q)))
	var s string
	cpu0 := cputime.Process()
	for b.Loop() {
		String(v, &s)
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWalkAgent walks an agent-sized body's messages (a 400-message,
// 229 KB history) and reads each one's content, as the host's decoding of
// a mapped request does.
func BenchmarkWalkAgent(b *testing.B) {
	doc := Doc(string(mockupstream.AgentChat("service", false)))
	b.SetBytes(int64(len(doc)))
	type msg struct{ Role, Content string }
	var msgs []msg
	cpu0 := cputime.Process()
	for b.Loop() {
		ok := Members(doc, []string{"messages"}, func(_ int, v Value) bool {
			return Array(v, &msgs, func(v Value, m *msg) bool {
				return Members(v, []string{"role", "content"}, func(i int, v Value) bool {
					return String(v, [...]*string{&m.Role, &m.Content}[i])
				})
			})
		})
		if !ok || len(msgs) != mockupstream.AgentMessages {
			b.Fatal(ok, len(msgs))
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// TestStringLiteralMarshaled: a text with escapes in json.Marshal's form
// is reported so, and each way of writing the same text otherwise is not.
func TestStringLiteralMarshaled(t *testing.T) {
	for _, c := range []struct {
		lit       string
		marshaled bool
	}{
		{`"code:\n\tif a \u0026\u0026 b \u003c c {\"x\\\"}\b\f\r\u0001\u001f \u2028\u2029 é"`, true},
		{`"no escape"`, false}, // read in place: not looked at
		{`"a\/b"`, false},
		{`"a\n<b"`, false},
		{`"a\n&b"`, false},
		{`"a\n>b"`, false},
		{`"a\u003Cb"`, false},
		{`"a\u000ab"`, false},
		{`"a\u00e9b"`, false},
		{`"a\n` + "\u2028" + `"`, false},
		{`"a\ud83d\ude00"`, false},
		{`"a\ufffd"`, false},
		{`"a\n` + "\xff" + `"`, false},
	} {
		var s string
		lit, marshaled, ok := StringLiteralMarshaled(Value(c.lit), &s)
		if !ok || marshaled != c.marshaled {
			t.Errorf("StringLiteralMarshaled(%s): marshaled %v, %v; want %v", c.lit, marshaled, ok, c.marshaled)
		}
		if marshaled && (lit != c.lit || string(AppendString(nil, s)) != c.lit) {
			t.Errorf("StringLiteralMarshaled(%s) = %s; AppendString writes %s", c.lit, lit, AppendString(nil, s))
		}
	}
}

// FuzzArena holds StringLiteralMarshaledIn to StringLiteralMarshaled: the
// texts of s (cut at each '|', repeated to fill chunks, long ones among
// them) read through one arena are what each reads alone, and a text
// read later leaves the earlier ones as they were.
func FuzzArena(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s + "|" + s + `|x\n` + "|bad \xff\xfe\xfd")
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a Arena
		type read struct {
			text, lit         string
			marshaled, ok     bool
			wantText, wantLit string
		}
		var reads []read
		parts := strings.Split(s, "|")
		parts = append(parts, strings.Repeat(s, 1+arenaChunk/4/(len(s)+1))) // longer than a chunk takes
		for range 1 + 2*arenaChunk/(len(s)+1) {
			parts = append(parts, parts[len(reads)%len(parts)])
			if len(reads) > 2000 {
				break
			}
			for _, p := range parts[len(parts)-1:] {
				doc := Value(`"` + p + `"`)
				var r read
				var wm, wok bool
				r.lit, r.marshaled, r.ok = StringLiteralMarshaledIn(doc, &r.text, &a)
				r.wantLit, wm, wok = StringLiteralMarshaled(doc, &r.wantText)
				if r.ok != wok || r.text != r.wantText || r.lit != r.wantLit || r.marshaled != wm {
					t.Fatalf("%q: in an arena %q %q %v %v, alone %q %q %v %v", doc, r.text, r.lit, r.marshaled, r.ok, r.wantText, r.wantLit, wm, wok)
				}
				reads = append(reads, r)
			}
		}
		for _, r := range reads {
			if r.text != r.wantText {
				t.Fatalf("a text read in the arena became %q, was %q", r.text, r.wantText)
			}
		}
	})
}

// BenchmarkArenaAgent reads the texts of an agent-sized history, alone and
// through one arena per history.
func BenchmarkArenaAgent(b *testing.B) {
	lits := agentTexts()
	if len(lits) != mockupstream.AgentMessages {
		b.Fatal(len(lits))
	}
	texts := make([]string, len(lits))
	for _, arena := range []bool{false, true} {
		b.Run(map[bool]string{false: "alone", true: "arena"}[arena], func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				var a *Arena
				if arena {
					a = new(Arena)
				}
				for i, l := range lits {
					StringLiteralMarshaledIn(l, &texts[i], a)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestStopsMarksTheFirst: in any eight bytes, the first mark of stops
// is on the first byte unquoteAppend must read alone, every byte value at
// every place, behind plain bytes and behind others.
func TestStopsMarksTheFirst(t *testing.T) {
	stop := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	check := func(w [8]byte) {
		word := binary.LittleEndian.Uint64(w[:])
		got, want := 8, 8
		if m := stops(word); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		for k, c := range w {
			if stop(c) {
				want = k
				break
			}
		}
		if got != want || load64(string(w[:]), 0) != word {
			t.Fatalf("%q: first mark at %d, want %d", w, got, want)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for k := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, 0x20, 0x21, '"' + 1, '\\' + 1, 0x00} {
				var w [8]byte
				for j := range w {
					w[j] = fill
				}
				w[k] = byte(c)
				check(w)
				for j := k + 1; j < 8; j++ {
					w[j] = byte(rnd.IntN(256))
				}
				check(w)
			}
		}
	}
}

// BenchmarkUnquoteAgent is the unescaping pass alone over the texts of an
// agent-sized history (216 KB, an escape every thirteen bytes), into one
// buffer: what BenchmarkArenaAgent costs less its allocations.
func BenchmarkUnquoteAgent(b *testing.B) {
	var texts []string
	type msg struct{}
	var msgs []msg
	Members(Doc(string(mockupstream.AgentChat("service", false))), []string{"messages"}, func(_ int, v Value) bool {
		return Array(v, &msgs, func(m Value, _ *msg) bool {
			return Members(m, []string{"content"}, func(_ int, c Value) bool {
				texts = append(texts, string(c[1:len(c)-1]))
				return true
			})
		})
	})
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	b.SetBytes(int64(n))
	buf := make([]byte, 0, 64<<10)
	cpu0 := cputime.Process()
	for b.Loop() {
		for _, t := range texts {
			if _, _, ok := unquoteAppend(buf[:0], t); !ok {
				b.Fatal(t)
			}
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// agentTexts returns the content literals of the agent-sized history
// (mockupstream.AgentChat), in order.
func agentTexts() []Value {
	var lits []Value
	type msg struct{}
	var msgs []msg
	Members(Doc(string(mockupstream.AgentChat("service", false))), []string{"messages"}, func(_ int, v Value) bool {
		return Array(v, &msgs, func(m Value, _ *msg) bool {
			return Members(m, []string{"content"}, func(_ int, c Value) bool {
				lits = append(lits, c)
				return true
			})
		})
	})
	return lits
}
