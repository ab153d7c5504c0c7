package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/jsonfast"
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

	// A text decoded with its literal (as the host's decoder reads an
	// agent's history) is recorded as json.Marshal writes it, whatever
	// form the literal had: copied when it is that form, escaped when not.
	copied := 0
	for _, s := range append(strs, "code:\n\tif a && b < c {\"x\"}") {
		m, _ := json.Marshal(s)
		for _, lit := range []string{string(m), string(jsonfast.AppendStringPlain(nil, s)),
			strings.ReplaceAll(string(m), "n", `\u006e`), strings.ReplaceAll(string(m), `\n`, `\u000a`)} {
			var msg Message
			l, marshaled, ok := jsonfast.StringLiteralMarshaled(jsonfast.Value(lit), &msg.Content)
			if !ok || msg.Content != s {
				continue // a byte that is not UTF-8 read as U+FFFD
			}
			msg.Role = "user"
			msg.SetContentJSONMarshaled(l, marshaled)
			if _, ok := msg.ContentMarshaled(); ok {
				copied++
			}
			check(Request{Input: []Message{msg}})
		}
	}
	if copied == 0 {
		t.Error("no literal was copied into the recorded request")
	}

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
	// An agent's 400-message history (229 KB) as the host's decoder reads
	// it: each text with its literal, copied when in json.Marshal's form
	// ("agent"), and the same texts without their literals, escaped again
	// ("agent-escaped").
	var agent Request
	gjson.GetBytes(mockupstream.AgentChat("service", false), "messages").ForEach(func(_, m gjson.Result) bool {
		msg := Message{Role: m.Get("role").Str}
		lit, marshaled, _ := jsonfast.StringLiteralMarshaled(jsonfast.Value(m.Get("content").Raw), &msg.Content)
		msg.SetContentJSONMarshaled(lit, marshaled)
		agent.Input = append(agent.Input, msg)
		return true
	})
	escaped := Request{Input: slices.Clone(agent.Input)}
	for i := range escaped.Input {
		escaped.Input[i].SetContentJSON("")
	}
	for _, c := range []struct {
		name string
		r    *Request
	}{{"agent", &agent}, {"agent-escaped", &escaped}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				recordedJSON(c.r)
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestRecordedBounds: a recorded request of SharedRequestMin bytes or
// more gives where each input message ends, written by hand or by
// json.Marshal alike: each prefix up to a bound is `{"input":[` and the
// messages so far, the same bytes whatever follows. A smaller request and
// one with no input give none.
func TestRecordedBounds(t *testing.T) {
	var msgs []Message
	for i := range 40 {
		msgs = append(msgs, Message{Role: "user", Content: fmt.Sprintf("turn %d: \"quoted\"\n\t%s é", i, strings.Repeat("text <&> ", 60))})
	}
	tool := append(append([]Message{}, msgs...), Message{Role: "tool", ToolCallID: "call_1", Content: "result"})
	for _, r := range []Request{
		{Input: msgs, Stream: true},
		{Input: msgs, Instructions: "Be brief.", MaxOutputTokens: 9},
		{Input: tool}, // json.Marshal's path
		{Input: msgs, Tools: []Tool{{Name: "f"}}, Stream: true}, // json.Marshal's path
	} {
		req, bounds, err := recordedWithBounds(&r, true)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := recordedJSON(&r)
		if !bytes.Equal(req, want) || len(bounds) != len(r.Input) {
			t.Fatalf("recordedWithBounds: %d bytes and %d bounds, want recordedJSON's %d and %d", len(req), len(bounds), len(want), len(r.Input))
		}
		prefix := []byte(`{"input":[`)
		for i, m := range r.Input {
			if i > 0 {
				prefix = append(prefix, ',')
			}
			mj, err := json.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			prefix = append(prefix, mj...)
			if string(req[:bounds[i]]) != string(prefix) {
				t.Fatalf("bound %d: %q, want %q", i, req[max(0, bounds[i]-40):bounds[i]], prefix[max(0, len(prefix)-40):])
			}
		}
	}
	for _, r := range []Request{{Input: msgs[:2]}, {Input: msgs[:2], Tools: []Tool{{Name: "f"}}}, {Instructions: strings.Repeat("x", 20000)}} {
		if _, bounds, _ := recordedWithBounds(&r, true); bounds != nil {
			t.Fatalf("a request of %d messages has %d bounds, want none", len(r.Input), len(bounds))
		}
	}
	if _, bounds, _ := recordedWithBounds(&Request{Input: msgs}, false); bounds != nil {
		t.Fatal("bounds not asked for, given")
	}
}
