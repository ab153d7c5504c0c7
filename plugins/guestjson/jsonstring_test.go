package guestjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// stdQuote is encoding/json's encoding of s with HTML escaping off, the
// reference AppendString must match byte for byte.
func stdQuote(t testing.TB, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendJSONString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"<a&b>", `"<a&b>"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
		{"é ✓ 😀", `"é ✓ 😀"`},
		{"bad\xffbyte\xc3", `"bad\ufffdbyte\ufffd"`},
		{"\ufffd", "\"\ufffd\""},
	} {
		got := string(AppendString([]byte("x"), c.in))
		if got != "x"+c.want {
			t.Errorf("AppendString(%q) = %s, want %s", c.in, got[1:], c.want)
		}
		if std := stdQuote(t, c.in); got[1:] != std {
			t.Errorf("AppendString(%q) = %s, encoding/json says %s", c.in, got[1:], std)
		}
	}
}

// Random strings weighted towards the characters that need care; a fixed
// seed keeps failures reproducible. FuzzAppendJSONString explores further.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	alphabet := []string{"a", "Z", " ", `"`, `\`, "/", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029",
		"😀", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "<", "&"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b []byte
		for n := rng.IntN(12); n > 0; n-- {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		s := string(b)
		if got, want := string(AppendString(nil, s)), stdQuote(t, s); got != want {
			t.Fatalf("AppendString(%q) = %s, encoding/json says %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\u2028", "\xff\xfe", "😀", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if want := stdQuote(t, s); string(got) != want {
			t.Fatalf("AppendString(%q) = %s, encoding/json says %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("output is not UTF-8: %q", got)
		}
	})
}

// A string Value from a body is copied as is when that is safe and
// re-encoded when it is not; either way a reader gets the decoded value.
func TestAppendStringValue(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"plain"`, "plain"},
		{`"esc\n\"\\ \u00e9 \ud83d\ude00"`, "esc\n\"\\ é 😀"},
		{`"é ✓"`, "é ✓"},
		{"\"raw\ttab\"", "raw\ttab"},
		{"\"bad\xffbyte\"", "bad\uFFFDbyte"},
		{"\"ctl\x01\xc3\xa9\"", "ctl\x01é"},
		{"\"esc\\n and \x02 raw\"", "esc\n and \x02 raw"},
		{`"lone \ud800\u0041"`, "lone \uFFFDA"},
	} {
		got := append(AppendStringValue([]byte(`"`), Value(c.raw)), '"')
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %q: %v", c.raw, got, err)
		}
		if back != c.want {
			t.Errorf("%q read back as %q, want %q", c.raw, back, c.want)
		}
		if !utf8.Valid(got) || bytes.ContainsAny(got, "\t\x01\x02") {
			t.Errorf("%q gave output that is not clean JSON text: %q", c.raw, got)
		}
	}
}

func TestAppendCompact(t *testing.T) {
	in := "{ \"a b\" : [ 1 ,\n\t2 ],\r\n \"s\":\"x \\\" y\" }"
	if got, want := string(AppendCompact(nil, in)), `{"a b":[1,2],"s":"x \" y"}`; got != want {
		t.Errorf("AppendCompact = %s, want %s", got, want)
	}
}

// Whatever a string Value holds, even from malformed input, what
// AppendStringValue makes of it is a valid JSON string.
func FuzzAppendStringValue(f *testing.F) {
	for _, s := range []string{`"ok"`, `"a\\"`, `"ab\"`, "\"\x01\xff\"", `"\u12`, `"\ud800\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Parse(s)
		if !v.IsString() {
			return
		}
		got := append(AppendStringValue([]byte(`"`), v), '"')
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Fatalf("%q gave %q", s, got)
		}
	})
}
