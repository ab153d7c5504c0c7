//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/plugins/runtime/runtimetest"
)

// load builds this plugin for wasip1 and loads it, which also runs its
// self-test.
func load(tb testing.TB) *runtime.Plugin {
	tb.Helper()
	return runtimetest.Load(tb, ".")
}

// A sample request and result of each endpoint.
const (
	chatRequest = `{"endpoint":"chat.completions","tenant_id":"t","actor":{"id":"a","type":"user","name":"A"},` +
		`"body":{"model":"service","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi \"there\"\n"}],` +
		`"stream":true,"stream_options":{"include_usage":true}}}`
	chatResult = `{"endpoint":"chat.completions","id":"chatcmpl-1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":"Hello!","finish_reason":"stop","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}},` +
		`"echo":{"include_usage":true}}`
	responsesRequest = `{"endpoint":"responses","tenant_id":"t","actor":{"id":"a","type":"user","name":"A"},` +
		`"body":{"model":"service","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Hi \"there\"\n"}]}],` +
		`"text":{"format":{"type":"json_schema","name":"reply","schema":{"type":"object"}}},"metadata":{"k":"v"},"stream":true}}`
	responsesResult = `{"endpoint":"responses","id":"resp_1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":"{}","finish_reason":"stop","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}},` +
		`"echo":{"instructions":"Be brief.","metadata":{"k":"v"},"temperature":1,"top_p":1,"max_output_tokens":null,` +
		`"text":{"format":{"type":"json_schema","name":"reply","schema":{"type":"object"}}},"tool_choice":"auto","tools":[],` +
		`"parallel_tool_calls":true,"store":true,"truncation":"disabled","user":null,"previous_response_id":null}}`
)

// The plugin must answer exactly as the native compat package does, for
// each endpoint: the host relies on the two being interchangeable.
func TestPluginMatchesNative(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		name   string
		hook   runtime.Hook
		native func([]byte) ([]byte, error)
		in     string
		shape  string // what the output must hold, so that each endpoint is seen to get its own shape
	}{
		{"chat request", runtime.MapRequest, compat.MapRequest, chatRequest, `"include_usage":true`},
		{"chat result", runtime.MapResult, compat.MapResult, chatResult, `"object":"chat.completion"`},
		{"responses request", runtime.MapRequest, compat.MapRequest, responsesRequest, `"metadata":{"k":"v"}`},
		{"responses result", runtime.MapResult, compat.MapResult, responsesResult, `"object":"response"`},
	} {
		got, err := p.Call(context.Background(), c.hook, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := c.native([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s\nplugin: %s\nnative: %s", c.name, got, want)
		}
		if !bytes.Contains(got, []byte(c.shape)) {
			t.Errorf("%s: output lacks %s: %s", c.name, c.shape, got)
		}
	}
}

func TestPluginReportsClientErrors(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		in, param, code string
	}{
		{`{"endpoint":"chat.completions","body":{"model":"service","messages":[{"role":"user","content":"x"}],"n":3}}`, "n", "unsupported_parameter"},
		{`{"endpoint":"chat.completions","body":{"model":"service","messages":[{"role":"user","content":"x"}],"stop":["
"]}}`, "stop", "unsupported_parameter"},
		{`{"endpoint":"chat.completions","body":{"model":"service","messages":[{"role":"user","content":"x"}],"temperature":"hot"}}`, "temperature", "invalid_body"},
		{`{"endpoint":"responses","body":{"model":"service","input":[{"type":"function_call_output","output":"1"}]}}`, "input[0].call_id", "invalid_body"},
		{`{"endpoint":"responses","body":{"model":"service","input":"x","tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"}}}`, "tool_choice", "unsupported_parameter"},
	} {
		_, err := p.Call(context.Background(), runtime.MapRequest, []byte(c.in))
		var ie *runtime.InputError
		if !errors.As(err, &ie) || ie.Param != c.param || ie.Code != c.code || ie.Message == "" {
			t.Errorf("want a client error %s on %s, got %v", c.code, c.param, err)
		}
	}
}

// A call for an endpoint the plugin does not map is a routing mistake of
// the host, not the client's: it must fault rather than answer in the
// shape of another endpoint.
func TestPluginRefusesUnknownEndpoints(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		hook runtime.Hook
		in   string
	}{
		{runtime.MapRequest, `{"endpoint":"embeddings","body":{"model":"service","input":"x"}}`},
		{runtime.MapRequest, `{"endpoint":"Responses","body":{"model":"service","input":"x"}}`},
		{runtime.MapRequest, `{"body":{"model":"service","messages":[{"role":"user","content":"x"}]}}`},
		{runtime.MapResult, `{"endpoint":"completions","id":"cmpl-1","message_id":"msg_1","created":1,"model":"service","status":"completed","result":{"text":"x"}}`},
		{runtime.MapResult, `{"id":"chatcmpl-1","message_id":"msg_1","created":1,"model":"service","status":"completed","result":{"text":"x"}}`},
	} {
		out, err := p.Call(context.Background(), c.hook, []byte(c.in))
		var f *runtime.Fault
		if !errors.As(err, &f) {
			t.Errorf("%s %s: want a fault, got %v (output %s)", c.hook, c.in, err, out)
		}
	}
}

// BenchmarkPlugin measures the cost of one guest call, the figure the
// design's per-request budget is about.
func BenchmarkPlugin(b *testing.B) {
	p := load(b)
	for _, c := range []struct {
		name   string
		hook   runtime.Hook
		native func([]byte) ([]byte, error)
		in     string
	}{
		{"Chat/MapRequest", runtime.MapRequest, mapRequest, chatRequest},
		{"Chat/MapRequestLarge", runtime.MapRequest, mapRequest, largeRequest(chatTurn, "chat.completions", "messages")},
		{"Chat/MapResult", runtime.MapResult, mapResult, chatResult},
		{"Responses/MapRequest", runtime.MapRequest, mapRequest, responsesRequest},
		{"Responses/MapRequestLarge", runtime.MapRequest, mapRequest, largeRequest(responsesTurn, "responses", "input")},
		{"Responses/MapResult", runtime.MapResult, mapResult, responsesResult},
	} {
		// The same code, called through the wasm plugin and compiled natively,
		// in one run: quote the ratio.
		b.Run(c.name+"/wasm", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Call(context.Background(), c.hook, []byte(c.in)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/native", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.native([]byte(c.in)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One turn of escaped text in content parts, as each endpoint spells it.
var (
	chatTurn = `{"role":"user","content":[{"type":"text","text":"` +
		strings.Repeat(`Our \"express\" order arrived late.\nPlease explain. `, 6) + `"}]}`
	responsesTurn = `{"role":"user","content":[{"type":"input_text","text":"` +
		strings.Repeat(`Our \"express\" order arrived late.\nPlease explain. `, 6) + `"}]}`
)

// largeRequest is a ~7 KB body: 20 turns under key of the endpoint's body.
func largeRequest(turn, endpoint, key string) string {
	return `{"endpoint":"` + endpoint + `","body":{"model":"service","` + key + `":[` + strings.Repeat(turn+",", 19) + turn + `]}}`
}
