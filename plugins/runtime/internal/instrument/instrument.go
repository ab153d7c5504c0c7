package instrument

import (
	"bytes"
	"errors"
	"fmt"
)

// Why plugins are instrumented: a guest call runs as native code that Go can
// neither preempt nor interrupt, so a guest stuck in a loop would hold its
// thread forever and, at the next garbage collection, stop the whole process
// (the collector waits for every goroutine, and a timer meant to interrupt
// the guest cannot fire while the world is stopped). wazero's own remedy,
// WithCloseOnContextDone, leaves native code for Go at every loop iteration
// and starts a goroutine per call; it made calls 2-4x slower plus ~5 µs each
// (see ABI.md, "Time budget"). Instead, Load rewrites the module once, adding
// a counter, the fuel, in a new mutable i32 global:
//
//   - at every function entry the code takes one unit of fuel and, once the
//     fuel is down to zero or below, calls the imported host function tick,
//     which checks the call's deadline (aborting the call once it has
//     passed) and returns fresh fuel;
//   - at every loop header the code takes one unit too, but only traps when
//     the fuel reaches -MaxLoopSteps: a loop that long without entering a
//     single function is taken to be running away.
//
// Any unbounded computation enters functions or runs loops, so it is either
// checked against its deadline every FuelPerTick steps or stopped after
// MaxLoopSteps. Only function entries call tick because a call in a loop
// header, even on a path never taken, makes the compiler keep the loop's
// values in memory rather than registers: that version executed almost twice
// the instructions; this one costs about as much as the counting itself.
// Because tick is Go code, it is also where the garbage collector can stop
// the goroutine, so long calls no longer stall the process.

// The import the instrumentation adds, tick() -> i32 of module TickModule,
// and the export of the fuel global, which tells the host why a guest
// trapped. Names starting with TickModule are reserved for the host.
const (
	TickModule = "runedge_host"
	TickName   = "tick"
	FuelExport = "runedge_host_fuel"
)

// Section ids, and the order in which non-custom sections must appear.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunc      = 3
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElem      = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
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

// Module returns the module wasm with fuel checks and the tick import
// added, as described above, and its data segments joined (mergeData). It
// leaves the exports and the behaviour of the module unchanged.
func Module(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return nil, errors.New("not a WebAssembly 1.0 binary module")
	}
	sections, err := splitSections(wasm[8:])
	if err != nil {
		return nil, err
	}
	if err := checkCounts(sections, len(wasm)); err != nil {
		return nil, err
	}
	in := &instrumenter{}
	for _, s := range sections {
		switch s.id {
		case secImport:
			if err := in.countImports(s.content); err != nil {
				return nil, fmt.Errorf("import section: %w", err)
			}
		case secMemory:
			n, err := (&wasmReader{b: s.content}).u32()
			if err != nil {
				return nil, fmt.Errorf("memory section: %w", err)
			}
			in.hasMemory = in.hasMemory || n > 0
		case secDataCount:
			in.hasDataCount = true
		}
	}
	in.tickFunc = in.importedFuncs
	in.code.importedFuncs = in.importedFuncs
	out := append(make([]byte, 0, len(wasm)+len(wasm)/8), wasm[:8]...)
	// Sections to add when the module has none, in their required place.
	pending := []byte{secType, secImport, secFunc, secGlobal, secExport}
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
	definedFuncs    uint32 // the module's own functions
	hasMemory       bool   // the module defines or imports a memory
	hasDataCount    bool   // the module has a data count section
	tickType        uint32 // type index of tick
	chargeType      uint32 // type index of the bulk helper charge
	bulkType        uint32 // type index of the bulk helpers fill and copy
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
	case secFunc:
		content, err = in.functions(content)
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
	case secData:
		content, err = mergeData(content, in.hasDataCount)
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
		if module == TickModule {
			return fmt.Errorf("imports from module %q, which is reserved for the host", TickModule)
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
			in.hasMemory = true
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

// types finds or appends the types of tick and of the bulk helpers
// (instrument_bulk.go).
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
	wanted := []struct {
		typ []byte
		idx *uint32
	}{{typeTick, &in.tickType}, {typeCharge, &in.chargeType}, {TypeBulk, &in.bulkType}}
	found := make([]bool, len(wanted))
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
		for j, w := range wanted {
			if !found[j] && bytes.Equal(b[start:r.pos], w.typ) {
				*w.idx, found[j] = i, true
			}
		}
	}
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	out := append([]byte(nil), b[entries:r.pos]...)
	total := n
	for j, w := range wanted {
		if !found[j] {
			*w.idx = total
			total++
			out = append(out, w.typ...)
		}
	}
	return append(appendU32(nil, total), out...), nil
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
	out = appendName(appendName(out, TickModule), TickName)
	return appendU32(append(out, 0x00), in.tickType), nil
}
