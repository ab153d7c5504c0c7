package native_test

import (
	"context"
	"os"
	"testing"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/runtime"
)

// BenchmarkMapResult is the default map_result run natively from the
// host's typed input, as the translate stage calls it: through the JSON
// envelope (written, then parsed by the mapping: what every plugin gets,
// and what the native default got before) and through the host's view of
// the input (runtime.Plugin.MapResult). The inputs are compat's own test
// inputs, a chat completion and a Response.
func BenchmarkMapResult(b *testing.B) {
	ctx := context.Background()
	e, err := runtime.NewEngine(ctx, runtime.EngineConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	p, err := native.Load(e, runtime.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, file string }{
		{"chat", "../compat/testdata/result/chat_completed.json"},
		{"responses", "../compat/testdata/result/responses_completed.json"},
	} {
		raw, err := os.ReadFile(c.file)
		if err != nil {
			b.Fatal(err)
		}
		in, err := abi.ParseResultInput(raw)
		if err != nil {
			b.Fatal(err)
		}
		in.Echo = append([]byte(nil), in.Echo...) // not aliasing raw
		view, err := p.MapResult(ctx, &in)
		if err != nil {
			b.Fatal(err)
		}
		env, err := p.Call(ctx, runtime.MapResult, in.AppendJSON(nil))
		if err != nil || string(env) != string(view) {
			b.Fatalf("the view's reply differs from the envelope's (%v):\n%s\n%s", err, view, env)
		}
		b.Run(c.name+"/envelope", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Call(ctx, runtime.MapResult, in.AppendJSON(nil)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/view", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.MapResult(ctx, &in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
