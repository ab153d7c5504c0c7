package model

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/internal/cputime"
)

func TestModel(t *testing.T) {
	chat, resp := filters.ChatCompletions, filters.Responses
	for _, tc := range []struct {
		ep          filters.Endpoint
		body        string
		status      int
		code, param string
		stream, use bool
	}{
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}]}`},
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`, stream: true, use: true},
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}],"stream":false,"stream_options":{"include_usage":true}}`},
		{ep: resp, body: `{"model":"service","input":"hi","text":{}}`},
		{ep: resp, body: `{"model":"service","input":[{"role":"user","content":"hi"}],"stream":true}`, stream: true},
		{ep: chat, body: ``, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `{"model":`, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `[1,2]`, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `{"messages":[{"role":"user","content":"hi"}]}`, status: 400, code: apierr.CodeInvalidBody, param: "model"},
		{ep: chat, body: `{"model":7,"messages":[]}`, status: 400, code: apierr.CodeInvalidBody, param: "model"},
		{ep: chat, body: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, status: 404, code: apierr.CodeModelNotFound, param: "model"},
		{ep: chat, body: `{"model":"service"}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":[]}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":"hi"}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":[{}],"stream":"yes"}`, status: 400, code: apierr.CodeInvalidBody, param: "stream"},
		{ep: chat, body: `{"model":"service","messages":[{}],"stream_options":true}`, status: 400, code: apierr.CodeInvalidBody, param: "stream_options"},
		{ep: resp, body: `{"model":"service"}`, status: 400, code: apierr.CodeInvalidBody, param: "input"},
		{ep: resp, body: `{"model":"service","input":{"role":"user"}}`, status: 400, code: apierr.CodeInvalidBody, param: "input"},
	} {
		x, _ := filtertest.Exchange(tc.ep, tc.body)
		next := &filtertest.Next{}
		err := New().Handle(context.Background(), x, next)
		if tc.status == 0 {
			if err != nil || !next.Called {
				t.Errorf("%s: want pass, got %v", tc.body, err)
				continue
			}
			if x.Stream != tc.stream || x.IncludeUsage != tc.use {
				t.Errorf("%s: stream %v include_usage %v", tc.body, x.Stream, x.IncludeUsage)
			}
			continue
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code || e.Param != tc.param {
			t.Errorf("%s: want %d %s param %q, got %v (param %q)", tc.body, tc.status, tc.code, tc.param, err, paramOf(e))
		}
		if next.Called {
			t.Errorf("%s: next called after refusal", tc.body)
		}
	}
}

func paramOf(e *apierr.Error) string {
	if e == nil {
		return ""
	}
	return e.Param
}

func BenchmarkModel(b *testing.B) {
	body := `{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`
	x, _ := filtertest.Exchange(filters.ChatCompletions, body)
	next := &filtertest.Next{}
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Handle(context.Background(), x, next); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDuplicateKeys: a key twice at the top level is a 400 naming it,
// escaped or not; nested duplicates are left to the schema of their field.
func TestDuplicateKeys(t *testing.T) {
	for body, key := range map[string]string{
		`{"model":"service","messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}`: "messages",
		`{"model":"service","mod\u0065l":"other","messages":[{"role":"user","content":"a"}]}`:                       "model",
		`{"model":"service","stream":false,"messages":[{"role":"user","content":"a"}],"stream":true}`:               "stream",
	} {
		x, _ := filtertest.Exchange(filters.ChatCompletions, body)
		err := New().Handle(context.Background(), x, &filtertest.Next{})
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Code != apierr.CodeInvalidBody || e.Param != key {
			t.Fatalf("%s: %v, want 400 invalid_body naming %q", body, err, key)
		}
	}
	x, _ := filtertest.Exchange(filters.ChatCompletions, `{"model":"service","messages":[{"role":"user","content":"a","x":1}],"metadata":{"a":"1","a":"2"}}`)
	if err := New().Handle(context.Background(), x, &filtertest.Next{}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkModelLarge is the stage on a 1 MiB body of 35,000 messages,
// the largest a default configuration accepts.
func BenchmarkModelLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"model":"service","messages":[`)
	for i := 0; i < 35000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"role":"user","content":"hi"}`)
	}
	sb.WriteString(`]}`)
	x, _ := filtertest.Exchange(filters.ChatCompletions, sb.String())
	next := &filtertest.Next{}
	m := New()
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Handle(context.Background(), x, next); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDuplicateKey is the top level's one read (the duplicate-key
// check and the members the stage reads) alone, on the small body of
// BenchmarkModel and the 1 MiB one of BenchmarkModelLarge: its share of the
// stage's cost.
func BenchmarkDuplicateKey(b *testing.B) {
	small := `{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`
	large := `{"model":"service","messages":[` + strings.Repeat(`{"role":"user","content":"hi"},`, 34999) + `{"role":"user","content":"hi"}]}`
	for name, body := range map[string]string{"small": small, "large": large} {
		obj := gjson.Parse(body)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, dup := readTop(obj.ForEach); dup {
					b.Fatal("dup")
				}
			}
		})
	}
}

// BenchmarkModelAgent is the stage on an agent's 400-message history
// (229 KB of code and prose with escapes).
func BenchmarkModelAgent(b *testing.B) {
	x, _ := filtertest.Exchange(filters.ChatCompletions, string(mockupstream.AgentChat("service", false)))
	next := &filtertest.Next{}
	m := New()
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := m.Handle(context.Background(), x, next); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// FuzzReadValidTopMatchesGjson holds the stage's one pass to the three
// readings it stands for: a body it takes is one that the depth check and
// gjson.Valid pass and that is an object, and its top level reads as
// gjson's walk reads it, member for member; a body they all pass, it
// takes.
func FuzzReadValidTopMatchesGjson(f *testing.F) {
	for _, s := range []string{
		`{"model":"service","messages":[{"role":"user","content":"a"}],"stream":true,"stream_options":{"include_usage":true}}`,
		` {"mod\u0065l":"service","model":"x"} `, `{"model":"service","input":"hi","metadata":{"a":"b"},"include":["reasoning.encrypted_content"]}`,
		`{"stream":1.5e3,"input":[],"messages":null}`, `[1]`, `"x"`, `{"a":1,}`, `{"model":"\u00e9\n"}`, `{}`,
		`{"model":"service","messages":[[[[[[[[1]]]]]]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(mockupstream.AgentChat("service", false))
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, key, dup, ok, _ := readValidTop(body, nil, nil)
		obj := gjson.ParseBytes(body)
		want := checkDepth(filters.ChatCompletions, body) == nil && gjson.ValidBytes(body) && obj.IsObject()
		if ok != want {
			t.Fatalf("readValidTop(%q) ok = %v, the three checks %v", body, ok, want)
		}
		if !ok {
			return
		}
		wf, wk, wdup := readTop(obj.ForEach)
		if !reflect.DeepEqual(fields, wf) || key != wk || dup != wdup {
			t.Fatalf("readValidTop(%q) = %v %q %v\ngjson's walk: %v %q %v", body, fields, key, dup, wf, wk, wdup)
		}
		if dup {
			return
		}
		// The members it records read as gjson.GetBytes reads them.
		x := &filters.Exchange{Body: body}
		x.SetMembers(func(add func(key, raw string, at int)) bool {
			_, _, _, ok, _ := readValidTop(body, add, nil)
			return ok
		})
		names := append([]string{"model", "context_management", "absent"}, topNames[:]...)
		obj.ForEach(func(k, _ gjson.Result) bool {
			names = append(names, k.Str)
			return true
		})
		for _, n := range names {
			if !plainName.MatchString(n) {
				continue // gjson reads it as a path
			}
			if got, want := x.Member(n), gjson.GetBytes(body, n); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: Member(%q) = %#v, gjson.GetBytes %#v", body, n, got, want)
			}
		}
	})
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
