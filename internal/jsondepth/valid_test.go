package jsondepth

import (
	"fmt"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
)

// checkValid holds Valid to what it stands for on b: gjson.Valid and
// Exceeds within limit, and for an object its top-level members as
// gjson's walk reads them (key literal and offset, value raw and offset).
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
		return
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
	checkValid(t, mockupstream.AgentChat("service", false), 128)
	checkValid(t, mockupstream.AgentInput("service", false), 128)
	if !Valid(mockupstream.AgentChat("service", false), 128, nil) {
		t.Fatal("the agent body is not valid")
	}
}

func FuzzValidMatchesGjson(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x\"]}"}],"c":null}`, `{"a":1,}`, ` {"model":"service","messages":[{"role":"user","content":"hi\n"}],"stream":true} `,
		`[1,-2.5e3,"\u00e9",true,false,null,{}]`, `{"a\u0062":{"c":[[]]}}`, `{"a":01}`} {
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
