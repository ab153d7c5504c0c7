package runtime

import (
	"bytes"
	"errors"
	"fmt"
)

// Why plugins are instrumented: a guest call runs as native code that Go can
// neither preempt nor interrupt, so a guest stuck in a loop would hold its
// thread forever and, at the next garbage collection, stop the whole process
// (the collector waits for every goroutine). wazero's own remedy,
// WithCloseOnContextDone, leaves native code for Go at every loop iteration
// and starts a goroutine per call; it made calls 2-4x slower plus ~5 µs each
// (see ABI.md, "Time budget"). Instead, Load rewrites the module once:
//
//   - a new mutable i32 global, the fuel, starts at fuelPerTick;
//   - at every function entry and loop header the code decrements the fuel
//     and, when it reaches zero, calls the imported host function tick and
//     refills the fuel with its result.
//
// Any unbounded computation runs loops or calls, so it reaches tick every
// fuelPerTick steps; tick checks the call's deadline and aborts the call
// once it has passed. Between ticks the cost is a few instructions per loop
// iteration. Because tick is Go code, it is also where the collector can
// stop the goroutine, so long calls no longer stall the process.

// The import the instrumentation adds: tick() -> i32 of module tickModule.
const (
	tickModule = "runedge_host"
	tickName   = "tick"
)

// Section ids, and the order in which non-custom sections must appear.
const (
	secCustom = 0
	secType   = 1
	secImport = 2
	secGlobal = 6
	secExport = 7
	secStart  = 8
	secElem   = 9
	secCode   = 10
)

var sectionOrder = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

// typeTick is the function type of tick, () -> i32, as encoded in the type
// section.
var typeTick = []byte{0x60, 0, 1, 0x7f}

// wasmSection is one section of the original module.
type wasmSection struct {
	id      byte
	content []byte
}

// instrument returns the module wasm with fuel checks and the tick import
// added, as described above. It leaves the exports and the behaviour of the
// module unchanged.
func instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return nil, errors.New("not a WebAssembly 1.0 binary module")
	}
	sections, err := splitSections(wasm[8:])
	if err != nil {
		return nil, err
	}
	in := &instrumenter{}
	for _, s := range sections {
		if s.id == secImport {
			if err := in.countImports(s.content); err != nil {
				return nil, fmt.Errorf("import section: %w", err)
			}
		}
	}
	in.tickFunc = in.importedFuncs
	in.code.importedFuncs = in.importedFuncs
	out := append(make([]byte, 0, len(wasm)+len(wasm)/8), wasm[:8]...)
	// Sections to add when the module has none, in their required place.
	pending := []byte{secType, secImport, secGlobal}
	for _, s := range sections {
		for len(pending) > 0 && s.id != secCustom && sectionOrder[pending[0]] <= sectionOrder[s.id] {
			if pending[0] != s.id {
				if out, err = in.appendSection(out, pending[0], nil); err != nil {
					return nil, err
				}
			}
			pending = pending[1:]
		}
		if out, err = in.appendSection(out, s.id, s.content); err != nil {
			return nil, err
		}
	}
	for _, id := range pending {
		if out, err = in.appendSection(out, id, nil); err != nil {
			return nil, err
		}
	}
	if !in.coded {
		return nil, errors.New("module has no code")
	}
	return out, nil
}

// splitSections splits a module's sections (after the header).
func splitSections(b []byte) ([]wasmSection, error) {
	r := &wasmReader{b: b}
	var out []wasmSection
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		content, err := r.bytes(uint64(n))
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		if _, known := sectionOrder[id]; !known && id != secCustom {
			return nil, fmt.Errorf("unknown section id %d", id)
		}
		out = append(out, wasmSection{id, content})
	}
	return out, nil
}

// instrumenter carries what the rewrite of one section needs to know about
// the others. The sections are processed in module order, which is the order
// in which these fields are filled in.
type instrumenter struct {
	importedFuncs   uint32
	importedGlobals uint32
	tickType        uint32 // type index of tick
	tickFunc        uint32 // function index of tick
	fuelGlobal      uint32 // global index of the fuel
	code            codeRewriter
	coded           bool // the code section was rewritten
}

// appendSection appends section id, rewritten; content is nil for a
// section the original module lacks.
func (in *instrumenter) appendSection(out []byte, id byte, content []byte) ([]byte, error) {
	var err error
	switch id {
	case secType:
		content, err = in.types(content)
	case secImport:
		content, err = in.imports(content)
	case secGlobal:
		content, err = in.globals(content)
	case secExport:
		content, err = in.exports(content)
	case secStart:
		content, err = in.start(content)
	case secElem:
		content, err = in.elements(content)
	case secCode:
		content, err = in.codes(content)
		in.coded = true
	case secCustom:
		content, err = in.custom(content)
	}
	if err != nil {
		return nil, fmt.Errorf("section %d: %w", id, err)
	}
	return appendSection(out, id, content), nil
}

// countImports counts the imported functions and globals, whose indices come
// before those of the module's own, and rejects a module that imports from
// the host's reserved module.
func (in *instrumenter) countImports(b []byte) error {
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		module, err := r.name()
		if err != nil {
			return err
		}
		if module == tickModule {
			return fmt.Errorf("imports from module %q, which is reserved for the host", tickModule)
		}
		if _, err := r.name(); err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00: // function: type index
			in.importedFuncs++
			err = r.skipLEB(5)
		case 0x01: // table: reference type, limits
			if _, err = r.byte(); err == nil {
				err = skipLimits(r)
			}
		case 0x02: // memory: limits
			err = skipLimits(r)
		case 0x03: // global: value type, mutability
			in.importedGlobals++
			_, err = r.bytes(2)
		default:
			err = fmt.Errorf("unknown import kind %#x", kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skipLimits skips table or memory limits: a flag, a minimum, and a maximum
// when bit 0 of the flag is set.
func skipLimits(r *wasmReader) error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag&1 != 0 {
		return skipU32s(r, 2)
	}
	return r.skipLEB(5)
}

// types finds or appends the type of tick.
func (in *instrumenter) types(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n := uint32(0)
	if b != nil {
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
	}
	entries := r.pos
	for i := range n {
		start := r.pos
		if form, err := r.byte(); err != nil || form != 0x60 {
			return nil, fmt.Errorf("type %d is not a function type", i)
		}
		for range 2 { // parameters, results
			count, err := r.u32()
			if err != nil {
				return nil, err
			}
			if _, err := r.bytes(uint64(count)); err != nil {
				return nil, err
			}
		}
		if bytes.Equal(b[start:r.pos], typeTick) {
			in.tickType = i
			return b, nil
		}
	}
	in.tickType = n
	out := appendU32(nil, n+1)
	out = append(out, b[entries:]...)
	return append(out, typeTick...), nil
}

// imports appends the tick import after the original ones, so that it takes
// the function index right after theirs.
func (in *instrumenter) imports(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n := uint32(0)
	if b != nil {
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
	}
	out := appendU32(nil, n+1)
	out = append(out, b[r.pos:]...)
	out = appendName(appendName(out, tickModule), tickName)
	return appendU32(append(out, 0x00), in.tickType), nil
}

// globals rewrites the initialisers (which may name functions) and appends
// the fuel global. It also prepares the fuel check, which needs the fuel's
// index.
func (in *instrumenter) globals(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n := uint32(0)
	if b != nil {
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
	}
	out := appendU32(nil, n+1)
	for range n {
		typ, err := r.bytes(2) // value type, mutability
		if err != nil {
			return nil, err
		}
		out = append(out, typ...)
		if out, err = in.code.expr(r, out); err != nil {
			return nil, err
		}
	}
	in.fuelGlobal = in.importedGlobals + n
	out = append(out, 0x7f, 0x01, opI32Const) // mutable i32
	if zzNoCall {
		out = appendSLEB32(out, 1<<30)
	} else {
		out = appendSLEB32(out, fuelPerTick)
	}
	out = append(out, opEnd)
	in.code.check = fuelCheck(in.fuelGlobal, in.tickFunc)
	if zzHybrid {
		in.code.check, in.code.entry = zzLoopCheck(in.fuelGlobal), zzEntryCheck(in.fuelGlobal, in.tickFunc)
	}
	return out, nil
}

// fuelCheck is the code inserted at function entries and loop headers:
//
//	fuel = fuel - 1
//	if fuel == 0 { fuel = tick() }
func fuelCheck(fuel, tick uint32) []byte {
	var c []byte
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 1, opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Eqz, opIf, blockTypeNone)
	if zzNoCall {
		return append(c, opUnreachable, opEnd)
	}
	c = appendU32(append(c, opCall), tick)
	c = appendU32(append(c, opGlobalSet), fuel)
	return append(c, opEnd)
}

// appendSLEB32 appends v as signed LEB128.
func appendSLEB32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

var zzNoCall = false

var zzHybrid = false

func zzEntryCheck(fuel, tick uint32) []byte {
	var c []byte
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 1, opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 0, 0x4c, opIf, blockTypeNone)
	c = appendU32(append(c, opCall), tick)
	c = appendU32(append(c, opGlobalSet), fuel)
	return append(c, opEnd)
}

func zzLoopCheck(fuel uint32) []byte {
	var c []byte
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 1, opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const)
	c = appendSLEB32(c, -(1 << 28))
	c = append(c, 0x4c, opIf, blockTypeNone, opUnreachable, opEnd)
	return c
}
