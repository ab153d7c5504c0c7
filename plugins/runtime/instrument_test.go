package runtime

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/runtime/internal/instrument"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// refsModule is a module that refers to its functions in every way the
// binary format allows, so that a wrong index after instrumentation shows
// as a wrong result: by call, through a table filled by an active element
// segment, from a funcref global's initialiser, from a passive segment of
// ref.func expressions, as the start function, by export and by name. It
// imports one function, so that its own functions' indices shift.
func refsModule() []byte {
	return refsModuleNamed(func(names []byte) []byte {
		return concat(name("name"), []byte{1}, uleb(uint64(len(names))), names)
	})
}

// refsModuleNamed is refsModule with the name section nameSec makes of its
// function name map.
func refsModuleNamed(nameSec func(names []byte) []byte) []byte {
	const (
		opCallIndirect = 0x11
		opLocalTee     = 0x22
		opLocalGet     = 0x20
		opTableSet     = 0x26
		opI32Add       = 0x6a
		opI32LtS       = 0x48
		opBrIf         = 0x0d
		funcref        = 0x70
	)
	i32c := func(v int32) []byte { return append([]byte{opI32Const}, sleb(int64(v))...) }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	// Function indices: 0 is the import "env" "seven".
	funcs := []struct {
		name   string
		typ    byte
		locals []byte
		body   []byte
	}{
		{"answer", 0, nil, i32c(41)},                                      // 1
		{"via_table", 0, nil, cat(i32c(0), []byte{opCallIndirect, 0, 0})}, // 2: table[0] = answer
		{"via_global", 0, nil, cat(i32c(1), []byte{opGlobalGet, 1, opTableSet, 0}, i32c(1), []byte{opCallIndirect, 0, 0})},             // 3
		{"via_passive", 0, nil, cat(i32c(2), i32c(0), i32c(1), []byte{opPrefixMisc, 12, 1, 0}, i32c(2), []byte{opCallIndirect, 0, 0})}, // 4: table.init elem 1
		{"sum", 0, nil, []byte{opCall, 0, opCall, 1, opI32Add}},                                                                        // 5: seven + answer
		{"start", 1, nil, cat(i32c(5), []byte{opGlobalSet, 0})},                                                                        // 6
		{"started", 0, nil, []byte{opGlobalGet, 0}},                                                                                    // 7
		{"count", 0, []byte{1, 1, wI32}, cat([]byte{opLoop, blockTypeNone, opLocalGet, 0}, i32c(1), []byte{opI32Add, opLocalTee, 0}, i32c(100_000), []byte{opI32LtS, opBrIf, 0, opEnd, opLocalGet, 0})}, // 8
	}
	types := vec(2, []byte{0x60, 0, 1, wI32, 0x60, 0, 0})
	imports := vec(1, cat(name("env"), name("seven"), []byte{0x00, 0}))
	var funcSec, codeSec, exportSec, names []byte
	exports := 0
	for i, f := range funcs {
		funcSec = append(funcSec, f.typ)
		locals := f.locals
		if locals == nil {
			locals = []byte{0}
		}
		body := cat(locals, f.body, []byte{opEnd})
		codeSec = append(append(codeSec, uleb(uint64(len(body)))...), body...)
		idx := byte(i + 1)
		names = append(append(names, idx), name(f.name)...)
		if f.name != "start" {
			exportSec = append(append(exportSec, name(f.name)...), 0x00, idx)
			exports++
		}
	}
	names = append(uleb(uint64(len(funcs))), names...)
	globals := vec(2, cat(
		[]byte{wI32, 1}, i32c(0), []byte{opEnd}, // 0: mutable i32, set by start
		[]byte{funcref, 0, opRefFunc, 1, opEnd}, // 1: ref.func answer
	))
	elems := vec(2, cat(
		[]byte{0}, i32c(0), []byte{opEnd}, vec(1, []byte{1}), // active, table 0 at 0: answer
		[]byte{5, funcref}, vec(1, []byte{opRefFunc, 5, opEnd}), // passive expressions: sum
	))

	m := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	m = section(m, 1, types)
	m = section(m, 2, imports)
	m = section(m, 3, vec(len(funcs), funcSec))
	m = section(m, 4, vec(1, []byte{funcref, 0x00, 4})) // table of 4
	m = section(m, 6, globals)
	m = section(m, 7, vec(exports, exportSec))
	m = section(m, 8, []byte{6}) // start
	m = section(m, 9, elems)
	m = section(m, 10, vec(len(funcs), codeSec))
	return section(m, 0, nameSec(names))
}

// runRefs instantiates wasm with the host modules it may import and returns
// the results of its exports.
func runRefs(t *testing.T, wasm []byte) (map[string]uint32, api.Module) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() uint32 { return 7 }).Export("seven").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := instantiateTick(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	results := make(map[string]uint32)
	for _, name := range []string{"answer", "via_table", "via_global", "via_passive", "sum", "started", "count"} {
		out, err := mod.ExportedFunction(name).Call(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results[name] = api.DecodeU32(out[0])
	}
	return results, mod
}

func TestInstrumentKeepsFunctionReferences(t *testing.T) {
	want := map[string]uint32{"answer": 41, "via_table": 41, "via_global": 41, "via_passive": 48, "sum": 48, "started": 5, "count": 100_000}
	orig := refsModule()
	if got, _ := runRefs(t, orig); !equalResults(got, want) {
		t.Fatalf("the test module itself is wrong: %v, want %v", got, want)
	}
	wasm, err := instrument.Module(orig)
	if err != nil {
		t.Fatal(err)
	}
	got, mod := runRefs(t, wasm)
	if !equalResults(got, want) {
		t.Errorf("instrumented: %v, want %v", got, want)
	}
	for name, def := range mod.ExportedFunctionDefinitions() {
		if def.Name() != name {
			t.Errorf("export %s is named %q in the name section", name, def.Name())
		}
	}
	fuel := mod.ExportedGlobal(instrument.FuelExport)
	if fuel == nil {
		t.Fatalf("no export %s", instrument.FuelExport)
	}
	// count's 100,000 iterations went below zero (no function entry refills
	// the fuel during the loop) without reaching the loop limit.
	if v := api.DecodeI32(fuel.Get()); v >= 0 || v <= -instrument.MaxLoopSteps {
		t.Errorf("fuel = %d after the calls, want it below zero but above the loop limit", v)
	}
	// The next function entry calls tick, which refills it.
	if _, err := mod.ExportedFunction("answer").Call(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := api.DecodeI32(fuel.Get()); v != instrument.FuelPerTick {
		t.Errorf("fuel = %d after a tick, want %d", v, instrument.FuelPerTick)
	}
}

func equalResults(a, b map[string]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestInstrumentMinimalModule instruments a module without the sections the
// instrumentation extends (types aside): they are added in their place.
func TestInstrumentMinimalModule(t *testing.T) {
	m := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	m = section(m, 1, vec(1, []byte{0x60, 0, 1, wI64})) // () -> i64: tick's type is added
	m = section(m, 3, vec(1, []byte{0}))
	m = section(m, 10, vec(1, append(uleb(4), 0, opI64Const, 3, opEnd)))
	wasm, err := instrument.Module(m)
	if err != nil {
		t.Fatal(err)
	}
	_, mod := tickedInstance(t, wasm)
	if mod.ExportedGlobal(instrument.FuelExport) == nil {
		t.Errorf("no export %s", instrument.FuelExport)
	}
}

func TestInstrumentRejects(t *testing.T) {
	header := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	// module has one function, () -> (), with body, exported as export
	// unless that is "".
	module := func(export string, body ...byte) []byte {
		m := section(header, 1, vec(1, []byte{0x60, 0, 0}))
		m = section(m, 3, vec(1, []byte{0}))
		if export != "" {
			m = section(m, 7, vec(1, append(name(export), 0x00, 0)))
		}
		body = append([]byte{0}, append(body, opEnd)...)
		return section(m, 10, vec(1, append(uleb(uint64(len(body))), body...)))
	}
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("\x00asn\x01\x00\x00\x00"), "not a WebAssembly 1.0 binary module"},
		{"truncated section", append(header, 1, 10, 0), "unexpected end of module"},
		{"unknown section", section(header, 42, nil), "unknown section id 42"},
		{"no code", section(header, 1, vec(0, nil)), "module has no code"},
		{"unsupported opcode", module("", 0x06), "unsupported opcode 0x6"},
		{"unsupported 0xfc opcode", module("", opPrefixMisc, 18), "unsupported opcode 0xfc 18"},
		{"truncated instruction", module("", opI32Const), "function 0: instruction at offset"},
		{"reserved import", section(header, 2, vec(1, append(append(name(instrument.TickModule), name("x")...), 0x00, 0))), `imports from module "runedge_host", which is reserved`},
		{"reserved export", module("runedge_host_fuel"), `export "runedge_host_fuel": names starting with "runedge_host" are reserved`},
		// Indices one past the module's own would name what the rewrite
		// adds: global 0 is the fuel here (the module has no globals), so
		// the guest would reset its own budget; function 1 is the bulk
		// helper charge.
		{"fuel global by index", module("", opI32Const, 0x7f, opGlobalSet, 0), "function 0: instruction at offset 3: global index 0 out of range (0 globals)"},
		{"helper function by index", module("", opCall, 1), "function index 1 out of range (1 functions)"},
		{"exported helper", section(section(section(section(header, 1, vec(1, []byte{0x60, 0, 0})), 3, vec(1, []byte{0})), 7, vec(1, append(name("f"), 0x00, 1))), 10, vec(1, []byte{2, 0, opEnd})), "function index 1 out of range (1 functions)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := instrument.Module(tt.wasm)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("instrument error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A name section whose subsections' sizes are not those of their content
// is refused: wazero reads such a section past a subsection's end, into
// bytes the rewrite changes, so keeping or dropping it could change
// whether the module compiles (FuzzInstrument found one the old rewrite
// turned from compiling into not compiling).
func TestMalformedNameSectionRefused(t *testing.T) {
	for _, tc := range []struct {
		what    string
		nameSec func(names []byte) []byte
	}{
		{"function names longer than their subsection", func(names []byte) []byte {
			return concat(name("name"), []byte{1}, uleb(uint64(len(names)-3)), names)
		}},
		{"a module name subsection that is not one name", func(names []byte) []byte {
			return concat(name("name"), []byte{0}, uleb(3), name("m"), []byte{'x'}, []byte{1}, uleb(uint64(len(names))), names)
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			_, err := instrument.Module(refsModuleNamed(tc.nameSec))
			if err == nil || !strings.Contains(err.Error(), "malformed name section") {
				t.Fatalf("err = %v, want a malformed name section refused", err)
			}
		})
	}
	// An exact one, with a module name, is rewritten and runs.
	ok := refsModuleNamed(func(names []byte) []byte {
		return concat(name("name"), []byte{0}, uleb(2), name("m"), []byte{1}, uleb(uint64(len(names))), names)
	})
	out, err := instrument.Module(ok)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runRefs(t, out); got["sum"] != 48 {
		t.Fatalf("sum = %d after the rewrite, want 48", got["sum"])
	}
}

// concat joins byte slices.
func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
