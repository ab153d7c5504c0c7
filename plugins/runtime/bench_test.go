package runtime

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/runedge/runedge/plugins/plugintest"
)

// benchInput returns a JSON-ish input of about n bytes.
func benchInput(n int) []byte {
	unit := []byte(`{"role":"user","content":"hello there"},`)
	return bytes.Repeat(unit, max(1, n/len(unit)))
}

// benchCall measures sequential calls of MapRequest on p with in.
func benchCall(b *testing.B, p *Plugin, in []byte) { benchHook(b, p, MapRequest, in) }

// benchHook measures sequential calls of hook h on p with in, once the
// guest has warmed up: a Go guest's heap grows during its first few thousand
// calls, and each growth copies its whole memory on the host.
func benchHook(b *testing.B, p *Plugin, h Hook, in []byte) {
	ctx := context.Background()
	for range 2000 {
		if _, err := p.Call(ctx, h, in); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := p.Call(ctx, h, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallEcho measures a Go guest (SDK) echoing ~100 B and ~7 KB: the
// boundary crossing plus the Go guest's fixed cost per call.
func BenchmarkCallEcho100B(b *testing.B) {
	benchCall(b, loadGo(b, newEngine(b), "echo", Options{}), benchInput(100))
}

func BenchmarkCallEcho7KB(b *testing.B) {
	benchCall(b, loadGo(b, newEngine(b), "echo", Options{}), benchInput(7000))
}

// BenchmarkCallRawEcho100B measures the host's own overhead per call, with an
// assembled guest that does no work.
func BenchmarkCallRawEcho100B(b *testing.B) {
	benchCall(b, loadRaw(b, newEngine(b), echoGuest(), Options{}), benchInput(100))
}

// BenchmarkCallMetrics measures what metrics add to a call: the same small
// call of the Go guest, without and with them.
func BenchmarkCallMetrics(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		b.Run(fmt.Sprintf("metrics=%v", withMetrics), func(b *testing.B) {
			cfg := EngineConfig{CacheDir: plugintest.CacheDir(b)}
			if withMetrics {
				cfg.Metrics = NewMetrics(prometheus.NewRegistry())
			}
			e, err := NewEngine(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = e.Close(context.Background()) })
			benchCall(b, loadGo(b, e, "echo", Options{}), benchInput(100))
		})
	}
}

// BenchmarkMapStream measures one map_stream call of the Go guest, whose
// hook (sdk.MapStreamFunc) decodes the input, holds back a partial word and
// encodes the output: the cost per batch of streamed text. tiny is one
// token's text, batched the text of a few dozen.
func BenchmarkMapStream(b *testing.B) {
	p := loadGo(b, newEngine(b), "echo", Options{})
	for _, tt := range []struct {
		name string
		text string
	}{
		{"tiny6B", "Hello "},
		{"batched200B", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200]},
	} {
		b.Run(tt.name, func(b *testing.B) {
			in := fmt.Appendf(nil, `{"endpoint":"chat.completions","id":"chatcmpl-9f8e7d6c","tenant_id":"acme","text":%q,"final":false}`, tt.text)
			benchHook(b, p, MapStream, in)
		})
	}
}

// BenchmarkCallContention runs 2x GOMAXPROCS callers against a pool of
// GOMAXPROCS instances of the Go guest, so callers wait for each other.
func BenchmarkCallContention(b *testing.B) {
	p := loadGo(b, newEngine(b), "echo", Options{})
	fillPool(b, p)
	in := benchInput(100)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.SetParallelism(2)
	defer reportCPU(b)()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Call(context.Background(), MapRequest, in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// fillPool makes all of p's instances up front, so that a benchmark measures
// calls rather than instantiation.
func fillPool(b *testing.B, p *Plugin) {
	ctx := context.Background()
	var held []*instance
	for range cap(p.pool.slots) {
		if err := p.pool.wait(ctx); err != nil {
			b.Fatal(err)
		}
		inst, err := p.pool.take(ctx)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, inst)
	}
	for _, inst := range held {
		p.pool.put(ctx, inst)
	}
}
