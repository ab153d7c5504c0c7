package guestjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeValue turns v into the Go values encoding/json would produce, using
// only value's own reading methods, so the two can be compared. Strings are
// made valid UTF-8 as encoding/json makes them; Value leaves that to
// AppendStringValue, which repairs text on output.
func decodeValue(v Value) any {
	switch {
	case v.IsObject():
		m := map[string]any{}
		v.Members(func(k, val Value) bool {
			m[string([]rune(k.Str()))] = decodeValue(val)
			return true
		})
		return m
	case v.IsArray():
		s := []any{}
		v.Elements(func(val Value) bool {
			s = append(s, decodeValue(val))
			return true
		})
		return s
	case v.IsString():
		return string([]rune(v.Str()))
	case v.IsNumber():
		f, _ := v.Num()
		return f
	}
	if b, ok := v.Bool(); ok {
		return b
	}
	return nil
}

func checkAgainstEncodingJSON(t *testing.T, doc string) {
	var want any
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		return // only valid JSON reaches a mapping
	}
	if got := decodeValue(Parse(doc)); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\n read as %#v\nwant     %#v", doc, got, want)
	}
}

func TestValueReadsLikeEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, ` { "a" : [ 1 , -2.5e3 , true , false , null ] , "b" : { } } `,
		`{"a\\":"x\\\\","b":"q\"uote","c":"\\\"","d":[[],[{}]]}`,
		`{"mess\u0061ges":[{"role":"user"}],"k":"\u00e9\ud83d\ude00"}`,
		"{\n\t\"pretty\": [\n\t\t\"x\"\n\t]\r\n}",
		`"top string"`, `42`, `null`, `[{"a":"}]{["}]`, `"\ud800"`, `"\ud800\u0041\udc00x"`, `"\/\b\f\r\t"`,
	} {
		checkAgainstEncodingJSON(t, doc)
	}
}

// FuzzValue checks that every valid document reads exactly as encoding/json
// reads it, and that any input at all is read without panicking.
func FuzzValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b\"",{"c":null}]}`, `[true,false]`, `"\\"`, `{"a":"\\\\"}`, `{`, `["a`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		decodeValue(Parse(doc))
		checkAgainstEncodingJSON(t, doc)
		checkObjectElements(t, doc)
		checkEnds(t, doc)
		checkIs(t, Parse(doc))
	})
}

// stringSpans returns the offset of each string's opening quote in doc
// and the offset after its closing quote, keys too, read a byte at a
// time (the StringEnds a reader of the whole document finds, with no
// string too short to be noted).
func stringSpans(doc string) []uint32 {
	var at []uint32
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(doc) {
			break
		}
		at = append(at, uint32(i), uint32(j+1))
		i = j
	}
	return at
}

// checkEnds holds the walks that take strings' ends from a StringEnds to
// the ones that read them, on a valid document, from its top and from a
// value inside it; and, with the ends of another document, reads any
// input without panicking or looping.
func checkEnds(t *testing.T, doc string) {
	t.Helper()
	walk := func(v Value, e *StringEnds) []string {
		var got []string
		v.MembersEnds(e, func(k, val Value) bool {
			got = append(got, string(k)+":"+string(val))
			val.ObjectElementsEnds(e, func(k, val Value) { got = append(got, "  "+string(k)+":"+string(val)) },
				func(elem Value) bool {
					got = append(got, string(elem))
					return true
				})
			return true
		})
		v.ObjectElementsEnds(e, func(k, val Value) { got = append(got, "  "+string(k)+":"+string(val)) },
			func(elem Value) bool {
				got = append(got, string(elem))
				return true
			})
		return got
	}
	b := []byte(doc)
	v := Parse(View(b))
	// Wrong ends: shifted by one, and another document's.
	walk(v, NewStringEnds(b, func() []uint32 {
		at := stringSpans(doc)
		for i := range at {
			at[i]++
		}
		return at
	}()))
	walk(v, NewStringEnds(b, stringSpans(`{"a":"`+doc+`","b":["x",{"c":"yy"}]}`)))
	if !json.Valid(b) {
		return
	}
	want := walk(v, nil)
	if got := walk(v, NewStringEnds(b, stringSpans(doc))); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: with the ends\n%q\nreading\n%q", doc, got, want)
	}
	// A value inside the document, walked with the document's ends.
	v.MembersEnds(nil, func(_, val Value) bool {
		if got, want := walk(val, NewStringEnds(b, stringSpans(doc))), walk(val, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q in %q: with the ends\n%q\nreading\n%q", val, doc, got, want)
		}
		return true
	})
}

// checkIs holds Is to decoding: v is s when its text is s, for s its
// text, its literal and strings a byte away from them.
func checkIs(t *testing.T, v Value) {
	t.Helper()
	if !v.IsString() {
		return
	}
	str, esc := v.Str(), v.Escaped()
	for _, s := range []string{str, esc, str + "x", esc + "x", "", `\\`, str[:len(str)/2], esc[:len(esc)/2]} {
		if got, want := v.Is(s), str == s; got != want {
			t.Fatalf("%q.Is(%q) = %v, its text is %q", v, s, got, str)
		}
	}
}

func TestStringEnds(t *testing.T) {
	long := `a \"quoted\" text, then a \\ and a \n, long enough to be noted`
	for _, doc := range []string{
		`{"model":"service","messages":[{"role":"user","content":"` + long + `"},{"role":"assistant","content":"` + long + `"}]}`,
		`[{"a":"}]{[\""},"x",{"b":["` + long + `",{"c":"` + long + `"}]}]`,
		` { "k" : [ { "t" : "\\" } , "\"" ] } `,
	} {
		checkEnds(t, doc)
	}
	// The ends are used, not read again: given an end at the escaped
	// quote inside a string, the walk reads the string to there.
	doc := `[{"a":"p\"q","b":1}]`
	b := []byte(doc)
	var vals []string
	Parse(View(b)).ObjectElementsEnds(NewStringEnds(b, []uint32{6, 10}), func(_, v Value) { vals = append(vals, string(v)) }, func(Value) bool { return true })
	if len(vals) == 0 || vals[0] != `"p\"` {
		t.Fatalf("values %q with an end at the escaped quote", vals)
	}
}

// checkObjectElements holds ObjectElements to Elements and Members on a
// valid document: the same elements, each after the same members; and
// reads any input without panicking.
func checkObjectElements(t *testing.T, doc string) {
	t.Helper()
	v := Parse(doc)
	var got []string
	v.ObjectElements(func(k, val Value) { got = append(got, "  "+string(k)+":"+string(val)) },
		func(elem Value) bool {
			got = append(got, string(elem))
			return true
		})
	if !json.Valid([]byte(doc)) {
		return
	}
	var want []string
	v.Elements(func(elem Value) bool {
		elem.Members(func(k, val Value) bool {
			want = append(want, "  "+string(k)+":"+string(val))
			return true
		})
		want = append(want, string(elem))
		return true
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: ObjectElements\n%q\nElements and Members\n%q", doc, got, want)
	}
}

func TestObjectElements(t *testing.T) {
	for _, doc := range []string{`[]`, `[{}]`, ` [ { "a" : 1 , "b" : [ {"c":"}"} ] } , 2 , "x" , { } ] `, `[{"a":"\"},"b":1}]`,
		`[{"role":"user","content":"say \"hi\"\n"},{"role":"assistant","content":"ok"}]`, `{"a":1}`, `[{"a":1]`, `[{"a"}]`, `[{`} {
		checkObjectElements(t, doc)
	}
	var n int
	Parse(`[{"a":1},{"b":2},{"c":3}]`).ObjectElements(func(Value, Value) {}, func(Value) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("done returned false and the walk went on: %d elements", n)
	}
}

func TestValueAccessors(t *testing.T) {
	obj := Parse(`{"s":"x","s":"last","esc":"us\u0065r","n":3,"b":true,"z":null}`)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"get returns the last repeated key", obj.Get("s").Is("last")},
		{"is decodes escapes", obj.Get("esc").Is("user")},
		{"is does not match a prefix", !obj.Get("s").Is("las")},
		{"absent is null", obj.Get("missing").IsNull() && obj.Get("missing") == ""},
		{"null is null", obj.Get("z").IsNull()},
		{"number", func() bool { f, ok := obj.Get("n").Num(); return ok && f == 3 }()},
		{"bool", func() bool { b, ok := obj.Get("b").Bool(); return ok && b }()},
		{"a string is not a bool", func() bool { _, ok := obj.Get("s").Bool(); return !ok }()},
		{"a string is not a number", func() bool { _, ok := obj.Get("s").Num(); return !ok }()},
	} {
		if !c.ok {
			t.Error(c.name)
		}
	}
}
