//go:build !wasip1

package abi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// normalizeCases are map_result outputs, compact and not, valid and not.
var normalizeCases = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"service","choices":[{"index":0,"message":{"role":"assistant","content":"a b  c\n\"q\" \\ é 🙂","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"a":"x \" y","b":[1,2.5e3,-0,true,false,null,{}],"c":{"d":[]}}`,
	`{"a" : 1}`, "{\"a\":1}\n", "{\n\"a\":1}", ` {"a":1}`, `{"a":1} `,
	`{"a":1}{"b":2}`, `{"a":1},`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":"\x01"}`,
	`{"a":"\u00zz"}`, `{"a":"\q"}`, `{"a":"unterminated}`, `{"a":1`, `{a:1}`, `{"a":1,}`, `{,}`,
	`{"a":"\u2028\u2029"}`, "{\"a\":\"\u2028\"}", "{\"a\":\"bad \xff\"}", `{"a":"<&>"}`,
	`[]`, `"s"`, `{}`, ``, `{"a":[1,]}`, `{"a":1e}`, `{"a":"\\"}`, `{"a":"\\\""}`,
}

// TestNormalizeResultMatchesCompact: the fast path returns what
// json.Compact did, and refuses what it refused.
func TestNormalizeResultMatchesCompact(t *testing.T) {
	for _, s := range normalizeCases {
		checkNormalize(t, []byte(s))
	}
}

func FuzzNormalizeResult(f *testing.F) {
	for _, s := range normalizeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) { checkNormalize(t, out) })
}

func checkNormalize(t *testing.T, out []byte) {
	t.Helper()
	var want bytes.Buffer
	wantErr := json.Compact(&want, out)
	if wantErr == nil && (want.Len() == 0 || want.Bytes()[0] != '{') {
		wantErr = errNotObject
	}
	got, err := NormalizeResult(bytes.Clone(out))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, json.Compact says %v", out, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%q: got %q, want %q", out, got, want.Bytes())
	}
}

var errNotObject = json.Unmarshal([]byte(`[]`), new(struct{}))

func BenchmarkNormalizeResult(b *testing.B) {
	out := []byte(normalizeCases[0])
	b.ReportAllocs()
	for b.Loop() {
		NormalizeResult(out)
	}
}

// TestNormalizeResultCompactNoCopy: compact output is returned as it is,
// without a copy (the fast path).
func TestNormalizeResultCompactNoCopy(t *testing.T) {
	out := []byte(normalizeCases[0])
	if n := testing.AllocsPerRun(10, func() { NormalizeResult(out) }); n != 0 {
		t.Errorf("%v allocations for compact output, want 0", n)
	}
}
