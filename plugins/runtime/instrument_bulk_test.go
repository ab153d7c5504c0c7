package runtime

import (
	"context"
	"crypto/sha256"
	"errors"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// bulkModule is a hand-assembled module exporting its 64-page (4 MiB)
// memory and one function per bulk memory instruction, each taking the
// instruction's operands: fill(d, v, n), copy(d, s, n) and init(d, s, n),
// the last from a 300-byte passive data segment.
func bulkModule() []byte {
	body := func(code ...byte) []byte {
		b := append([]byte{0, opLocalGet, 0, opLocalGet, 1, opLocalGet, 2}, code...)
		return append(uleb(uint64(len(b)+1)), append(b, opEnd)...)
	}
	segment := make([]byte, 300)
	for i := range segment {
		segment[i] = byte(i*7 + 3)
	}
	m := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	m = section(m, 1, vec(1, instrument.TypeBulk))
	m = section(m, 3, vec(3, []byte{0, 0, 0}))
	m = section(m, 5, vec(1, []byte{0x00, 64}))
	exports := append(name("memory"), 0x02, 0)
	for i, n := range []string{"fill", "copy", "init"} {
		exports = append(append(exports, name(n)...), 0x00, byte(i))
	}
	m = section(m, 7, vec(4, exports))
	m = section(m, 12, []byte{1}) // data count, which memory.init needs
	m = section(m, 10, vec(3, append(append(
		body(opPrefixMisc, miscMemFill, 0),
		body(opPrefixMisc, miscMemCopy, 0, 0)...),
		body(opPrefixMisc, miscMemInit, 0, 0)...)))
	return section(m, 11, vec(1, append(append([]byte{1}, uleb(uint64(len(segment)))...), segment...)))
}

// bulkOp is a call of one of bulkModule's functions.
type bulkOp struct {
	fn      string
	a, b, n uint32
}

const mib = 1 << 20

// bulkOps exercise the chunked helpers: below and above instrument.BulkChunk, copies
// that overlap in either direction, and operations out of bounds, which must
// trap without writing anything. The first ones lay down a pattern for the
// copies to move.
func bulkOps() []bulkOp {
	var ops []bulkOp
	for i := range uint32(64) {
		ops = append(ops, bulkOp{"fill", i * 65_537, i*31 + 1, 1000 + i*911})
	}
	return append(ops,
		bulkOp{"init", 5, 0, 300},
		bulkOp{"init", 3*mib + 17, 100, 150},
		bulkOp{"fill", 100, 7, 50},
		bulkOp{"fill", 10, 1, 3*mib + 5},
		bulkOp{"fill", 4*mib - 10, 2, 20},       // out of bounds
		bulkOp{"fill", 1 * mib, 3, 3*mib + 1},   // out of bounds at the end only
		bulkOp{"init", 4*mib - 10, 0, 300},      // out of bounds
		bulkOp{"init", 0, 100, 250},             // past the segment
		bulkOp{"fill", 2*mib + 3, 9, 5000},      // a mark for the copies
		bulkOp{"copy", 0, 12_345, 2*mib + 500},  // overlapping, forwards
		bulkOp{"copy", 12_345, 0, 2*mib + 777},  // overlapping, backwards
		bulkOp{"copy", 1*mib + 1, 1, 3*mib - 9}, // overlapping, backwards, several chunks
		bulkOp{"copy", 7, 1*mib + 7, 3*mib - 9}, // overlapping, forwards, several chunks
		bulkOp{"copy", 0, 3 * mib, 1*mib + 1},   // source out of bounds
		bulkOp{"copy", 3 * mib, 0, 1*mib + 1},   // destination out of bounds
		bulkOp{"copy", 0, 0xffff_fff0, 32},      // wraps around 32 bits
		bulkOp{"fill", 0xffff_fff0, 1, 2 * mib}, // wraps around 32 bits
	)
}

// tickedInstance instantiates wasm, an instrumented module or the one it
// was made from, in a fresh runtime with the tick host function it imports;
// the runtime is closed when the test ends.
func tickedInstance(t *testing.T, wasm []byte) (context.Context, api.Module) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	if err := instantiateTick(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	return ctx, mod
}

// runBulkOps runs ops on a fresh instance of wasm and returns, per
// operation, whether it trapped and the digest of the memory afterwards.
func runBulkOps(t *testing.T, wasm []byte, ops []bulkOp) []string {
	t.Helper()
	ctx, mod := tickedInstance(t, wasm)
	var out []string
	for _, op := range ops {
		_, err := mod.ExportedFunction(op.fn).Call(ctx, uint64(op.a), uint64(op.b), uint64(op.n))
		mem, _ := mod.ExportedMemory("memory").Read(0, mod.ExportedMemory("memory").Size())
		out = append(out, fmtResult(err != nil, sha256.Sum256(mem)))
	}
	return out
}

func fmtResult(trapped bool, sum [32]byte) string {
	s := "ok "
	if trapped {
		s = "trap "
	}
	return s + string(sum[:8])
}

// TestInstrumentBulkKeepsBehaviour runs the same bulk operations on the
// module as built and instrumented: same traps, same memory after each.
func TestInstrumentBulkKeepsBehaviour(t *testing.T) {
	orig := bulkModule()
	wasm, err := instrument.Module(orig)
	if err != nil {
		t.Fatal(err)
	}
	ops := bulkOps()
	want, got := runBulkOps(t, orig, ops), runBulkOps(t, wasm, ops)
	traps := 0
	for i := range ops {
		if strings.HasPrefix(want[i], "trap") {
			traps++
		}
		if got[i] != want[i] {
			t.Errorf("%+v: instrumented %q, as built %q", ops[i], got[i][:4], want[i][:4])
		}
	}
	if traps != 8 {
		t.Errorf("%d operations trapped, want the 8 out of bounds", traps)
	}
}

// TestInstrumentBulkCharges checks that bulk operations take fuel by their
// length, and that a long one calls tick, which refills it.
func TestInstrumentBulkCharges(t *testing.T) {
	wasm, err := instrument.Module(bulkModule())
	if err != nil {
		t.Fatal(err)
	}
	ctx, mod := tickedInstance(t, wasm)
	fuel := mod.ExportedGlobal(instrument.FuelExport)
	for _, op := range []bulkOp{{"fill", 0, 1, 100_000}, {"copy", 0, 200_000, 100_000}, {"init", 0, 0, 300}} {
		before := api.DecodeI32(fuel.Get())
		if _, err := mod.ExportedFunction(op.fn).Call(ctx, uint64(op.a), uint64(op.b), uint64(op.n)); err != nil {
			t.Fatal(err)
		}
		// One unit for the function entry, the rest for the bytes.
		if taken, want := before-api.DecodeI32(fuel.Get()), int32(1+op.n/instrument.BulkBytesPerStep); taken != want {
			t.Errorf("%s of %d bytes took %d units of fuel, want %d", op.fn, op.n, taken, want)
		}
	}
	if _, err := mod.ExportedFunction("fill").Call(ctx, 0, 1, 3*mib); err != nil {
		t.Fatal(err)
	}
	if v := api.DecodeI32(fuel.Get()); v <= 0 || v > instrument.FuelPerTick {
		t.Errorf("fuel = %d after a 3 MiB fill, want it refilled by tick", v)
	}
}

// TestCallTimeBudgetBulkMemory: without the bulk-memory charge, a plugin
// looping over memory.fill on a large buffer, one unit of fuel per
// iteration, ran 30 times its budget and held up the garbage collector, and
// so every goroutine, all along. Now the call ends within twice its budget
// and an unrelated goroutine keeps running.
func TestCallTimeBudgetBulkMemory(t *testing.T) {
	g := echoGuest()
	// 2000 fills of 48 MiB: seconds of work, as built.
	g.fillLoop, g.fillBytes, g.pages = 2000, 48*mib, 1000
	const budget = 250 * time.Millisecond
	p := loadRaw(t, newEngine(t), g, Options{CallTimeout: budget})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var worstGap time.Duration
	wg.Add(2)
	go func() { // the collector, which waits for every goroutine
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				goruntime.GC()
				time.Sleep(time.Millisecond)
			}
		}
	}()
	go func() { // an unrelated goroutine, ticking
		defer wg.Done()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-time.After(time.Millisecond):
				worstGap = max(worstGap, now.Sub(last))
				last = time.Now()
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	_, err := p.Call(context.Background(), MapRequest, []byte("x"))
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()

	var f *Fault
	if !errors.As(err, &f) || !errors.Is(f, ErrTimeout) {
		t.Fatalf("Call = %v, want the time budget exceeded", err)
	}
	if elapsed > 2*budget {
		t.Errorf("the call took %v, want it within twice its %v budget", elapsed, budget)
	}
	if worstGap > budget/2 {
		t.Errorf("an unrelated goroutine was stalled for %v during the call", worstGap)
	}
	t.Logf("call %v, worst gap of another goroutine %v", elapsed, worstGap)
}
