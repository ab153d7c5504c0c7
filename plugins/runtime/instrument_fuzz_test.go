package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// FuzzInstrument feeds the load-time rewriter (internal/instrument) arbitrary
// bytes, seeded with the hand-assembled test modules and, in testdata/fuzz,
// the inputs that once failed. It must never panic. A module it accepts must
// compile once rewritten exactly when it compiles as given, and behave the
// same: every export called in turn returns the same results or traps
// alike, and leaves the same memory. A module it refuses is not given to
// wazero here: the host never does, and wazero sizes slices by declared
// counts, so some malformed modules would exhaust this process's memory
// (which is why the rewriter refuses them: internal/instrument/instrument_counts.go).
func FuzzInstrument(f *testing.F) {
	fill := echoGuest()
	fill.fillLoop, fill.fillBytes, fill.pages = 3, 2*mib+3, 40
	loop := echoGuest()
	loop.loop = true
	for _, seed := range [][]byte{refsModule(), bulkModule(), echoGuest().wasm(), fill.wasm(), loop.wasm()} {
		f.Add(seed)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).WithMemoryLimitPages(64))
	f.Cleanup(func() { _ = rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() uint32 { return 7 }).Export("seven").Instantiate(ctx)
	if err != nil {
		f.Fatal(err)
	}
	if err := instantiateTick(ctx, rt); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := instrument.Module(wasm)
		if err != nil {
			return
		}
		orig, origErr := rt.CompileModule(ctx, wasm)
		if origErr == nil {
			defer orig.Close(ctx)
		}
		inst, instErr := rt.CompileModule(ctx, out)
		if instErr == nil {
			defer inst.Close(ctx)
		}
		switch {
		case origErr == nil && instErr != nil:
			t.Fatalf("the rewritten module does not compile: %v", instErr)
		case origErr != nil && instErr == nil:
			t.Fatalf("a module wazero refuses (%v) compiles once rewritten", origErr)
		case origErr != nil:
			return
		}
		want, ok := runExports(ctx, rt, orig, nil)
		if !ok {
			return // ran out of time: nothing to compare
		}
		got, ok := runExports(ctx, rt, inst, &budget{})
		if !ok {
			return // the loop limit or budget stopped the rewritten one
		}
		if len(got) != len(want) {
			t.Fatalf("rewritten: %d results, as built: %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("result %d: rewritten %q, as built %q", i, got[i], want[i])
			}
		}
	})
}

// runExports instantiates cm and calls each of its exported functions once,
// in name order, with zero arguments. It returns what happened (results or
// trap, then the memory's digest), or false when a call ran out of time,
// with b, when set, as the budget of the rewritten module's calls.
func runExports(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, b *budget) ([]string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if b != nil {
		b.start(time.Second)
		ctx = context.WithValue(context.Background(), budgetKey{}, b)
	}
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if mod != nil {
		defer mod.Close(context.Background())
	}
	stopped := func() bool {
		if b == nil {
			return ctx.Err() != nil
		}
		fuel := mod.ExportedGlobal(instrument.FuelExport)
		return b.expired || (fuel != nil && api.DecodeI32(fuel.Get()) <= -instrument.MaxLoopSteps)
	}
	if err != nil {
		if mod != nil && stopped() || errors.Is(err, context.DeadlineExceeded) {
			return nil, false
		}
		return []string{"instantiate: error"}, true
	}
	var out []string
	defs := cm.ExportedFunctions()
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		params := make([]uint64, len(defs[n].ParamTypes()))
		res, err := mod.ExportedFunction(n).Call(ctx, params...)
		if stopped() {
			return nil, false
		}
		if err != nil {
			out = append(out, n+": trap")
			continue
		}
		out = append(out, n+": "+fmtU64s(res))
	}
	for n := range cm.ExportedMemories() {
		if mem := mod.ExportedMemory(n); mem != nil {
			data, _ := mem.Read(0, mem.Size())
			sum := sha256.Sum256(data)
			out = append(out, n+": "+string(sum[:8]))
		}
	}
	return out, true
}

func fmtU64s(v []uint64) string {
	var b bytes.Buffer
	for _, x := range v {
		for i := range 8 {
			b.WriteByte(byte(x >> (8 * i)))
		}
	}
	return b.String()
}
