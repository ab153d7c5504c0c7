package compat

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeValue turns v into the Go values encoding/json would produce, using
// only value's own reading methods, so the two can be compared. Strings are
// made valid UTF-8 as encoding/json makes them; value leaves that to
// appendStringValue, which repairs text on output.
func decodeValue(v value) any {
	switch {
	case v.isObject():
		m := map[string]any{}
		v.members(func(k, val value) bool {
			m[string([]rune(k.str()))] = decodeValue(val)
			return true
		})
		return m
	case v.isArray():
		s := []any{}
		v.elements(func(val value) bool {
			s = append(s, decodeValue(val))
			return true
		})
		return s
	case v.isString():
		return string([]rune(v.str()))
	case v.isNumber():
		f, _ := v.num()
		return f
	}
	if b, ok := v.bool(); ok {
		return b
	}
	return nil
}

func checkAgainstEncodingJSON(t *testing.T, doc string) {
	var want any
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		return // only valid JSON reaches a mapping
	}
	if got := decodeValue(parseValue(doc)); !reflect.DeepEqual(got, want) {
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
		decodeValue(parseValue(doc))
		checkAgainstEncodingJSON(t, doc)
	})
}

func TestValueAccessors(t *testing.T) {
	obj := parseValue(`{"s":"x","s":"last","esc":"us\u0065r","n":3,"b":true,"z":null}`)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"get returns the last repeated key", obj.get("s").is("last")},
		{"is decodes escapes", obj.get("esc").is("user")},
		{"is does not match a prefix", !obj.get("s").is("las")},
		{"absent is null", obj.get("missing").isNull() && obj.get("missing") == ""},
		{"null is null", obj.get("z").isNull()},
		{"number", func() bool { f, ok := obj.get("n").num(); return ok && f == 3 }()},
		{"bool", func() bool { b, ok := obj.get("b").bool(); return ok && b }()},
		{"a string is not a bool", func() bool { _, ok := obj.get("s").bool(); return !ok }()},
		{"a string is not a number", func() bool { _, ok := obj.get("s").num(); return !ok }()},
	} {
		if !c.ok {
			t.Error(c.name)
		}
	}
}
