package runtime

import (
	"bytes"
	"context"
	"testing"
)

// benchInput returns a JSON-ish input of about n bytes.
func benchInput(n int) []byte {
	unit := []byte(`{"role":"user","content":"hello there"},`)
	return bytes.Repeat(unit, max(1, n/len(unit)))
}

// benchCall measures sequential calls of MapRequest on p with in.
func benchCall(b *testing.B, p *Plugin, in []byte) {
	ctx := context.Background()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Call(ctx, MapRequest, in); err != nil {
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

// BenchmarkCallContention runs 2x GOMAXPROCS callers against a pool of
// GOMAXPROCS instances of the Go guest, so callers wait for each other.
func BenchmarkCallContention(b *testing.B) {
	p := loadGo(b, newEngine(b), "echo", Options{})
	fillPool(b, p)
	in := benchInput(100)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.SetParallelism(2)
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
