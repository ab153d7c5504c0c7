package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkBudget compares ways to bound a guest call's time, calling the Go
// echo guest's instances directly (no pool) so that only the guest call and
// the budget are measured:
//
//   - none: the module as built, on a runtime without context-done checks;
//     no budget is possible;
//   - closeOnDone: wazero's WithCloseOnContextDone(true) with a deadline
//     context per call, which wazero watches with a goroutine;
//   - fuel: the design Load uses, the instrumented module (internal/instrument)
//     with a 250ms budget.
//
// ABI.md ("Time budget") quotes the results.
func BenchmarkBudget(b *testing.B) {
	inputs := []struct {
		name string
		hook Hook
		in   []byte
	}{
		{"echo100B", MapRequest, benchInput(100)},
		{"map100B", MapResult, mapInput(100)},
		{"map7KB", MapResult, mapInput(7000)},
	}
	const budget = 250 * time.Millisecond
	for _, in := range inputs {
		b.Run("none/"+in.name, func(b *testing.B) {
			inst := benchInstance(b, false, false)
			benchRunHook(b, inst, in.hook, in.in, func() {}, -1)
		})
		b.Run("closeOnDone/"+in.name, func(b *testing.B) {
			inst := benchInstance(b, false, true)
			var cancel context.CancelFunc = func() {}
			arm := func() {
				cancel()
				inst.ctx, cancel = context.WithTimeout(context.Background(), budget)
			}
			benchRunHook(b, inst, in.hook, in.in, arm, -1)
			cancel()
		})
		b.Run("fuel/"+in.name, func(b *testing.B) {
			inst := benchInstance(b, true, false)
			benchRunHook(b, inst, in.hook, in.in, func() {}, budget)
		})
	}
}

// benchRunHook calls hook h of inst with in, calling before first each time.
func benchRunHook(b *testing.B, inst *instance, h Hook, in []byte, before func(), d time.Duration) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		before()
		if status, _, err := inst.runHook(h, in, d); err != nil || status != abi.StatusOK {
			b.Fatalf("runHook = %d, %v", status, err)
		}
	}
}

// reportCPU starts measuring the process's CPU time and returns a func that
// reports it per iteration as cpu-ns/op. On a shared machine that is steadier
// than the wall time of ns/op, which counts time the benchmark waited for a
// CPU; it also counts the work of other goroutines, such as wazero's.
func reportCPU(b *testing.B) func() {
	start := cputime.Process()
	return func() {
		b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
	}
}

// benchInstance makes an instance of the Go echo guest on a runtime of its
// own, instrumented or not, with context-done checks or not.
func benchInstance(b *testing.B, instrumented, closeOnDone bool) *instance {
	b.Helper()
	ctx := context.Background()
	wasm, err := os.ReadFile(plugintest.Build(b, "./testdata/echo"))
	if err != nil {
		b.Fatal(err)
	}
	if instrumented {
		if wasm, err = instrument.Module(wasm); err != nil {
			b.Fatal(err)
		}
	}
	cache, _, err := sharedCache(plugintest.CacheDir(b))
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithMemoryLimitPages(defaultMaxMemoryPages).
		WithCloseOnContextDone(closeOnDone))
	b.Cleanup(func() { _ = rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	if err := instantiateTick(ctx, rt); err != nil {
		b.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	config := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	inst, err := instantiate(rt, cm, config, -1)
	if err != nil {
		b.Fatal(err)
	}
	return inst
}

// mapInput returns a "map:" command of the echo guest for a chat request of
// about n bytes, which the guest maps with gjson and sjson.
func mapInput(n int) []byte {
	msg := []byte(`{"role":"user","content":"hello there, how are you today?"}`)
	doc := []byte(`map:{"model":"gpt-4o-mini","messages":[`)
	doc = append(doc, msg...)
	for len(doc)+len(msg)+3 < n {
		doc = append(append(doc, ','), msg...)
	}
	return append(doc, "]}"...)
}

// TestMapInputIsMapped checks the benchmark's mapping workload.
func TestMapInputIsMapped(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{})
	out, err := p.Call(context.Background(), MapResult, mapInput(200))
	in := mapInput(200)
	want := fmt.Sprintf(`"metadata":{"chars":%d}`, 31*bytes.Count(in, []byte(`"content"`)))
	if err != nil || !bytes.Contains(out, []byte(want)) {
		t.Fatalf("Call = %s, %v; want it to contain %s", out, err, want)
	}
}
