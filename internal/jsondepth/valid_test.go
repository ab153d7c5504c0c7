package jsondepth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
)

// checkValid holds Valid to what it stands for on b: gjson.Valid and
// Exceeds within limit, and for an object its top-level members as
// gjson's walk reads them (key literal and offset, value raw and offset).
// plainRef reads valid JSON b a byte at a time: whether its strings hold
// only ASCII and one-letter escapes other than \/ and \\ (ValidPlain).
func plainRef(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 0x80:
			return false
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			i++
			if b[i] == 'u' || b[i] == '/' || b[i] == '\\' {
				return false
			}
		}
	}
	return true
}

func checkValid(t *testing.T, b []byte, limit int) {
	t.Helper()
	var got []string
	ok := Valid(b, limit, func(key, value []byte, keyAt, valueAt int) bool {
		got = append(got, fmt.Sprintf("%s@%d=%s@%d", key, keyAt, value, valueAt))
		return true
	})
	want := gjson.ValidBytes(b) && Exceeds(b, limit) < 0
	if ok != want {
		t.Fatalf("Valid(%q, %d) = %v; gjson.Valid && Exceeds: %v", b, limit, ok, want)
	}
	if !ok {
		if valid, plain, ends := ValidPlainEnds(b, limit, nil, []uint32{7}); valid || plain || len(ends) != 1 || ends[0] != 7 {
			t.Fatalf("ValidPlainEnds(%q) of an invalid body = %v %v %v, ends not as given", b, valid, plain, ends)
		}
		return
	}
	if _, plain := ValidPlain(b, limit, nil); plain != plainRef(b) {
		t.Fatalf("ValidPlain(%q) says plain %v, the byte-at-a-time reading %v", b, plain, plainRef(b))
	}
	if valid, plain, ends := ValidPlainEnds(b, limit, nil, []uint32{7}); !valid || plain != plainRef(b) || fmt.Sprint(ends) != fmt.Sprint(append([]uint32{7}, endsRef(b)...)) {
		t.Fatalf("ValidPlainEnds(%q) = %v %v %v; the byte-at-a-time reading: ends %v", b, valid, plain, ends, endsRef(b))
	}
	obj := gjson.ParseBytes(b)
	if !obj.IsObject() {
		if got != nil {
			t.Fatalf("Valid(%q) read members of a %v", b, obj.Type)
		}
		return
	}
	var ref []string
	obj.ForEach(func(k, v gjson.Result) bool {
		ref = append(ref, fmt.Sprintf("%s@%d=%s@%d", k.Raw, k.Index, v.Raw, v.Index))
		return true
	})
	if fmt.Sprint(got) != fmt.Sprint(ref) {
		t.Fatalf("Valid(%q) members\n%v\ngjson's walk\n%v", b, got, ref)
	}
}

func TestValid(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":[1,{"b":"x\"]}"}],"c":null}`, `[]`, `[1,2]`, `"x"`, `-0.5e+3`, `true`, `nul`,
		`{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\u12"}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a\"b":2, "c" : [ ] }`, `{"a":1}x`, `{"a":1} `,
		`{"a":{"b":{"c":{}}}}`, `[[[[]]]]`, `{"a":"b"`, `{"a":tru}`, `{"a":falsey}`, ``, ` `, `{"a":[1 2]}`,
	} {
		for _, limit := range []int{0, 1, 2, 3, 128} {
			checkValid(t, []byte(s), limit)
		}
	}
	// Escapes and stops at every place of a word, the escape's letter in
	// the next word too.
	for k := range 17 {
		for _, e := range []string{`\"`, `\n`, `\\`, `\/`, `\u0041`, `\x`, "\x01", `"`, "\\\x01", `\"\"`, `\n\\`} {
			pad := strings.Repeat("a", k)
			checkValid(t, []byte(`{"a":"`+pad+e+pad+`","b":"`+pad+e+`"}`), 4)
			checkValid(t, []byte(`["`+pad+e), 4)
		}
	}
	checkValid(t, mockupstream.AgentChat("service", false), 128)
	checkValid(t, mockupstream.AgentInput("service", false), 128)
	if !Valid(mockupstream.AgentChat("service", false), 128, nil) {
		t.Fatal("the agent body is not valid")
	}
}

// endsRef reads valid JSON b a byte at a time: the offsets of the
// opening quote and after the closing quote of each string value (not a
// key: one followed by a colon) of StringMin bytes or more.
func endsRef(b []byte) []uint32 {
	var at []uint32
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := i + 1
		for b[j] != '"' {
			if b[j] == '\\' {
				j++
			}
			j++
		}
		k := j + 1
		for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
			k++
		}
		if (k >= len(b) || b[k] != ':') && j+1-i >= StringMin {
			at = append(at, uint32(i), uint32(j+1))
		}
		i = j
	}
	return at
}

func FuzzValidMatchesGjson(f *testing.F) {
	f.Add([]byte(`{"a":["`+strings.Repeat(`x\"`, 30)+`",{"`+strings.Repeat("k", 70)+`":"`+strings.Repeat("y", 62)+`"}],"b":"`+strings.Repeat("z", 62)+`" }`), 4)
	for _, s := range []string{`{"a":[1,{"b":"x\"]}"}],"c":null}`, `{"a":1,}`, ` {"model":"service","messages":[{"role":"user","content":"hi\n"}],"stream":true} `,
		`[1,-2.5e3,"\u00e9",true,false,null,{}]`, `{"a\u0062":{"c":[[]]}}`, `{"a":01}`,
		// plainWords' escapes across words, and what ends its run.
		`["in \"serve\" reads,\n\t\tv, err := store.Get(r.Context(), \"id\"))\n\t\tif err != nil {\n\t\t\treturn\n\t}\n"]`,
		`["abcdefg\"#hijklmnopq\\]rstuvw\n\t\"\r\b\f\/\u0041 tail of it"]`, "[\"abcdefg\\\x80hijklmnop\\\x1fq\"]"} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		checkValid(t, b, limit%8)
	})
}

// BenchmarkValidAgent is the one pass on an agent-sized body, against the
// three it stands for (BenchmarkModelAgent in filters/model is the stage).
func BenchmarkValidAgent(b *testing.B) {
	agent := mockupstream.AgentChat("service", false)
	b.SetBytes(int64(len(agent)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if !Valid(agent, 128, func(_, _ []byte, _, _ int) bool { return true }) {
			b.Fatal("invalid")
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkThreeAgent(b *testing.B) {
	agent := mockupstream.AgentChat("service", false)
	b.SetBytes(int64(len(agent)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if Exceeds(agent, 128) >= 0 || !gjson.ValidBytes(agent) {
			b.Fatal("invalid")
		}
		gjson.ParseBytes(agent).ForEach(func(_, _ gjson.Result) bool { return true })
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// TestExactStopsMarksEach: in any eight bytes, exactStops marks each
// quote, backslash and control byte and nothing else, every byte value at
// every place, among plain bytes and among others.
func TestExactStopsMarksEach(t *testing.T) {
	stop := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	check := func(w [8]byte) {
		var want uint64
		for k, c := range w {
			if stop(c) {
				want |= 0x80 << (8 * k)
			}
		}
		if got := exactStops(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("exactStops(%q) = %#x, want %#x", w, got, want)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for k := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, 0x20, 0x21, '"' + 1, '\\' + 1, 0x00, '"', '\\', 0x1f} {
				var w [8]byte
				for j := range w {
					w[j] = fill
				}
				w[k] = byte(c)
				check(w)
				for j := range w {
					if j != k {
						w[j] = byte(rnd.IntN(256))
					}
				}
				check(w)
			}
		}
	}
}

// plainWordsRef is plainWords read a byte at a time: from i, whole words
// whose every byte is plain or part of an escape \n \t or \", the letter
// of a backslash that ends a word being the next word's first byte.
func plainWordsRef(b []byte, i int) (int, uint64) {
	var high uint64
	pending := false
	for ; i+8 <= len(b); i += 8 {
		p := pending
		for _, c := range b[i : i+8] {
			switch {
			case p:
				if c != '"' && c != 'n' && c != 't' {
					goto stop
				}
				p = false
			case c == '\\':
				p = true
			case c == '"' || c < 0x20:
				goto stop
			}
		}
		pending = p
		high |= binary.LittleEndian.Uint64(b[i:])
	}
stop:
	if pending {
		i--
	}
	return i, high
}

// TestPlainWords: plainWords takes the words the byte-at-a-time reading
// takes and no other, with every byte value at every place of two words,
// beside a backslash, a letter, a quote or plain bytes, at each offset.
func TestPlainWords(t *testing.T) {
	check := func(b []byte, i int) {
		t.Helper()
		j, high := plainWords(b, i)
		wj, whigh := plainWordsRef(b, i)
		if j < wj && bytes.Contains(b[j:min(j+10, len(b))], []byte(`"#`)) {
			// Stopped early at a word with a quote before '#', which the
			// quote's borrow marks: str reads it a stop at a time. The
			// byte-at-a-time reading is held to the words before it.
			wj, whigh = plainWordsRef(b[:i+(j+1-i)/8*8], i)
		}
		if j != wj || high != whigh {
			t.Fatalf("plainWords(%q, %d) = %d, %#x; byte at a time %d, %#x", b, i, j, high, wj, whigh)
		}
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("\\\\\\\"\"nnttab]#/u\x1f\x00\x80\xff\x7f ")
	for k := range 17 {
		for c := range 256 {
			for _, fill := range []string{"a", `\n`, `\"`, `\t`, `\\`, "\\", "]", "#", "\x80", "\x1f"} {
				b := []byte(strings.Repeat(fill, 24/len(fill)+1)[:24])
				b[k] = byte(c)
				for i := range 2 {
					check(b, i)
				}
				for _, prev := range []byte{'\\', '"', 'n', ']'} {
					if k > 0 {
						b[k-1] = prev
						check(b, 0)
					}
				}
				for j := range b {
					if j != k {
						b[j] = alphabet[rnd.IntN(len(alphabet))]
					}
				}
				check(b, 0)
				check(b, 1)
			}
		}
	}
}
