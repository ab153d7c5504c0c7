package runner

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRecordedJSONMatchesMarshal: the recorded request written by hand is
// the one json.Marshal writes, byte for byte, and a request with a field
// the hand-written form does not cover goes to json.Marshal. Every field
// of Request and Message is set in turn, by reflection, so a field added
// later that appendPlainRequest neither writes nor refuses fails here.
func TestRecordedJSONMatchesMarshal(t *testing.T) {
	strs := []string{"", "hello", "Be brief.", `q"b\s/`, "line\nbreak\ttab\r\b\f\x00\x1f\x7f", "<a&b>", "é 漢字 🙂",
		"\u2028\u2029", "bad \xff byte"}
	check := func(r Request) {
		t.Helper()
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recordedJSON(&r)
		if err != nil || string(got) != string(want) {
			t.Errorf("recordedJSON(%+v) = %s, %v\nwant %s", r, got, err, want)
		}
	}
	for _, s := range strs {
		for _, stream := range []bool{false, true} {
			check(Request{Input: []Message{{Role: "system", Content: s}, {Role: s, Content: "x"}}, Stream: stream})
			check(Request{Input: []Message{{Role: "user", Content: "x"}}, Instructions: s, PreviousResponseID: s,
				MaxOutputTokens: len(s) - 3, NoStore: stream, Background: !stream})
		}
	}
	check(Request{})
	check(Request{Input: []Message{}})

	base := Request{Input: []Message{{Role: "user", Content: "hi"}}, Stream: true}
	rt := reflect.TypeFor[Request]()
	for i := range rt.NumField() {
		r := base
		setNonZero(reflect.ValueOf(&r).Elem().Field(i))
		check(r)
	}
	mt := reflect.TypeFor[Message]()
	for i := range mt.NumField() {
		if !mt.Field(i).IsExported() { // not in the JSON form
			continue
		}
		r := base
		r.Input = []Message{{Role: "user", Content: "hi"}}
		setNonZero(reflect.ValueOf(&r.Input[0]).Elem().Field(i))
		check(r)
	}
}

// setNonZero gives v a value that is not its type's zero value.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("set <&>")
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setNonZero(v.Elem())
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"type":"object"}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setNonZero(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && f.Kind() == reflect.String {
				f.SetString("set")
				return
			}
		}
	}
}

// BenchmarkRecordedJSON is a chat request's recording, written by hand
// and by json.Marshal (what every run paid before).
func BenchmarkRecordedJSON(b *testing.B) {
	r := Request{Input: []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello"}}, Stream: true}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			recordedJSON(&r)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(&r)
		}
	})
}
