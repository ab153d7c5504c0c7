package runtime

import "github.com/runedge/runedge/plugins/abi"

// rawGuest describes a plugin assembled byte by byte, without Go, the SDK or
// WASI: it shows the ABI is usable from any language, and lets tests break
// the ABI in ways the SDK never would.
//
// Its hooks echo: runedge_alloc always returns bufferAt, a hook records the
// input length in a global, and runedge_output points at the input.
type rawGuest struct {
	version    int32  // returned by runedge_abi_version
	hooks      int32  // returned by runedge_hooks
	status     int32  // returned by the map hooks
	selfTest   int32  // returned by runedge_self_test
	trap       bool   // the map hooks execute unreachable
	allocAt    int32  // returned by runedge_alloc; 0 means bufferAt
	output     uint64 // returned by runedge_output when nonzero, instead of the echo
	omit       string // an export to leave out
	allocNoArg bool   // give runedge_alloc the wrong type, () -> i32
	loop       bool   // the map hooks loop forever
	// fillLoop, when nonzero, makes the map hooks run memory.fill on
	// fillBytes bytes that many times; pages is then the memory's size.
	fillLoop  int32
	fillBytes int32
	pages     int32
	// version, when nonzero, is returned by an added runedge_version.
	version64 uint64
}

// bufferAt is where the raw guest's input buffer starts in its one page
// (64 KiB) of memory.
const bufferAt = 1024

// echoGuest is a well-behaved raw guest implementing both map hooks.
func echoGuest() rawGuest {
	return rawGuest{version: 1, hooks: int32(abi.HookMapRequest | abi.HookMapResult)}
}

// Value types and opcodes used below, from the WebAssembly binary format,
// besides those wasmops_test.go defines.
const (
	wI32 = 0x7f
	wI64 = 0x7e

	opI64Or = 0x84
)

// wasm assembles the module.
func (g rawGuest) wasm() []byte {
	allocAt := g.allocAt
	if allocAt == 0 {
		allocAt = bufferAt
	}
	mapBody := []byte{opLocalGet, 1, opGlobalSet, 0}
	if g.trap {
		mapBody = append(mapBody, opUnreachable)
	}
	if g.loop {
		mapBody = append(mapBody, opLoop, blockTypeNone, 0x0c, 0, opEnd) // loop: br 0
	}
	if g.fillLoop != 0 {
		// local 0 = fillLoop; loop { memory.fill(bufferAt, 0, fillBytes); local 0--; br_if local 0 != 0 }
		mapBody = append(append(mapBody, opI32Const), sleb(int64(g.fillLoop))...)
		mapBody = append(mapBody, 0x21, 0, opLoop, blockTypeNone, opI32Const)
		mapBody = append(append(mapBody, sleb(bufferAt)...), opI32Const, 0, opI32Const)
		mapBody = append(append(mapBody, sleb(int64(g.fillBytes))...), opPrefixMisc, miscMemFill, 0)
		mapBody = append(mapBody, opLocalGet, 0, opI32Const, 1, opI32Sub, 0x22, 0, 0x0d, 0, opEnd)
	}
	mapBody = append(append(mapBody, opI32Const), sleb(int64(g.status))...)
	outBody := append([]byte{opI64Const}, sleb(int64(g.output))...)
	if g.output == 0 {
		// (bufferAt << 32) | len
		outBody = append([]byte{opGlobalGet, 0, opI64ExtendU32, opI64Const}, sleb(int64(bufferAt)<<32)...)
		outBody = append(outBody, opI64Or)
	}
	allocType := byte(1)
	if g.allocNoArg {
		allocType = 0
	}

	// Types: 0 () -> i32, 1 (i32) -> i32, 2 (i32, i32) -> i32, 3 () -> i64.
	types := [][]byte{
		{0x60, 0, 1, wI32},
		{0x60, 1, wI32, 1, wI32},
		{0x60, 2, wI32, wI32, 1, wI32},
		{0x60, 0, 1, wI64},
	}
	funcs := []struct {
		name string
		typ  byte
		body []byte
	}{
		{abi.ExportABIVersion, 0, append([]byte{opI32Const}, sleb(int64(g.version))...)},
		{abi.ExportHooks, 0, append([]byte{opI32Const}, sleb(int64(g.hooks))...)},
		{abi.ExportAlloc, allocType, append([]byte{opI32Const}, sleb(int64(allocAt))...)},
		{abi.ExportMapRequest, 2, mapBody},
		{abi.ExportMapResult, 2, mapBody},
		{abi.ExportMapStream, 2, mapBody},
		{abi.ExportSelfTest, 0, append([]byte{opI32Const}, sleb(int64(g.selfTest))...)},
		{abi.ExportOutput, 3, outBody},
	}
	if g.version64 != 0 {
		funcs = append(funcs, struct {
			name string
			typ  byte
			body []byte
		}{abi.ExportVersion, 3, append([]byte{opI64Const}, sleb(int64(g.version64))...)})
	}

	var typeSec, funcSec, exportSec, codeSec []byte
	for _, t := range types {
		typeSec = append(typeSec, t...)
	}
	exports := 0
	for i, f := range funcs {
		funcSec = append(funcSec, f.typ)
		body := append([]byte{0}, f.body...) // no locals
		body = append(body, opEnd)
		codeSec = append(codeSec, uleb(uint64(len(body)))...)
		codeSec = append(codeSec, body...)
		if f.name != g.omit {
			exportSec = append(exportSec, name(f.name)...)
			exportSec = append(exportSec, 0x00, byte(i)) // function i
			exports++
		}
	}
	if g.omit != abi.ExportMemory {
		exportSec = append(exportSec, name(abi.ExportMemory)...)
		exportSec = append(exportSec, 0x02, 0) // memory 0
		exports++
	}

	m := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	m = section(m, 1, vec(len(types), typeSec))
	m = section(m, 3, vec(len(funcs), funcSec))
	pages := max(g.pages, 1)
	m = section(m, 5, vec(1, append([]byte{0x00}, uleb(uint64(pages))...))) // one memory, min pages
	m = section(m, 6, vec(1, []byte{wI32, 0x01, opI32Const, 0, opEnd}))     // mutable i32 global = 0
	m = section(m, 7, vec(exports, exportSec))
	m = section(m, 10, vec(len(funcs), codeSec))
	return m
}

// section appends a section with id and content to m.
func section(m []byte, id byte, content []byte) []byte {
	m = append(m, id)
	m = append(m, uleb(uint64(len(content)))...)
	return append(m, content...)
}

// vec prefixes n encoded items with their count.
func vec(n int, items []byte) []byte { return append(uleb(uint64(n)), items...) }

// name encodes a string as the binary format does.
func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }

// uleb encodes v as unsigned LEB128.
func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// sleb encodes v as signed LEB128.
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
