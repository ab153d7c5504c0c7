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

const (
	request = `{"endpoint":"responses","tenant_id":"t","actor":{"id":"a","type":"user","name":"A"},` +
		`"body":{"model":"service","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Hi \"there\"\n"}]}],` +
		`"text":{"format":{"type":"json_schema","name":"reply","schema":{"type":"object"}}},"metadata":{"k":"v"},"stream":true}}`
	result = `{"endpoint":"responses","id":"resp_1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":"{}","finish_reason":"stop","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}},` +
		`"echo":{"instructions":"Be brief.","metadata":{"k":"v"},"temperature":1,"top_p":1,"max_output_tokens":null,` +
		`"text":{"format":{"type":"json_schema","name":"reply","schema":{"type":"object"}}},"tool_choice":"auto","tools":[],` +
		`"parallel_tool_calls":true,"store":true,"truncation":"disabled","user":null,"previous_response_id":null}}`
)

// The plugin must answer exactly as the native compat package does: the
// host relies on the two being interchangeable.
func TestPluginMatchesNative(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		hook   runtime.Hook
		native func([]byte) ([]byte, error)
		in     string
	}{
		{runtime.MapRequest, compat.MapRequest, request},
		{runtime.MapResult, compat.MapResult, result},
	} {
		got, err := p.Call(context.Background(), c.hook, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.hook, err)
		}
		want, err := c.native([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s\nplugin: %s\nnative: %s", c.hook, got, want)
		}
	}
}

func TestPluginReportsClientErrors(t *testing.T) {
	p := load(t)
	in := `{"endpoint":"responses","body":{"model":"service","input":[{"type":"function_call_output","output":"1"}]}}`
	_, err := p.Call(context.Background(), runtime.MapRequest, []byte(in))
	var ie *runtime.InputError
	if !errors.As(err, &ie) || ie.Param != "input[0].call_id" || ie.Code != "invalid_body" || ie.Message == "" {
		t.Errorf("want a client error on input[0].call_id, got %v", err)
	}
	in = `{"endpoint":"responses","body":{"model":"service","input":"x","tools":[{"type":"web_search"}]}}`
	_, err = p.Call(context.Background(), runtime.MapRequest, []byte(in))
	if !errors.As(err, &ie) || ie.Param != "tools[0].type" || ie.Code != "unsupported_parameter" {
		t.Errorf("want unsupported_parameter on tools[0].type, got %v", err)
	}
}

// A call for another endpoint is a routing mistake of the host, not the
// client's: it must fault rather than answer in the wrong shape.
func TestPluginRefusesOtherEndpoints(t *testing.T) {
	p := load(t)
	for hook, in := range map[runtime.Hook]string{
		runtime.MapRequest: `{"endpoint":"chat.completions","body":{"model":"service","messages":[{"role":"user","content":"x"}]}}`,
		runtime.MapResult:  `{"endpoint":"chat.completions","id":"chatcmpl-1","created":1,"model":"service","status":"completed","result":{"text":"x"}}`,
	} {
		_, err := p.Call(context.Background(), hook, []byte(in))
		var f *runtime.Fault
		if !errors.As(err, &f) {
			t.Errorf("%s: want a fault, got %v", hook, err)
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
		{"MapRequest", runtime.MapRequest, mapRequest, request},
		{"MapRequestLarge", runtime.MapRequest, mapRequest, largeRequest()},
		{"MapResult", runtime.MapResult, mapResult, result},
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

// largeRequest is a ~7 KB body: 20 turns of escaped text in content parts.
func largeRequest() string {
	turn := `{"role":"user","content":[{"type":"input_text","text":"` +
		strings.Repeat(`Our \"express\" order arrived late.\nPlease explain. `, 6) + `"}]}`
	return `{"endpoint":"responses","body":{"model":"service","input":[` + strings.Repeat(turn+",", 19) + turn + `]}}`
}
