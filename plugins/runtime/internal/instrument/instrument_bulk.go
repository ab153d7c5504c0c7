package instrument

// Bulk memory and table instructions (memory.fill, memory.copy, memory.init,
// table.fill, table.copy, table.init) do work proportional to a length
// operand in one instruction. Counting them as one step, like any other
// instruction, let a plugin loop over memory.fill on a large buffer for
// seconds against a 250 ms budget: each iteration took one unit of fuel, so
// the loop ran 2^26 iterations of megabytes each before the loop limit
// stopped it, and the garbage collector, which waits for the guest, stalled
// the whole process meanwhile. So the instrumentation charges these
// instructions by their length, in helper functions it appends to the
// module:
//
//   - charge(n) -> n takes n/BulkBytesPerStep units of fuel and calls tick
//     when the fuel runs out, like a function entry; it is called right
//     before every bulk instruction, whose length operand is on top of the
//     stack, and returns it, so the stack is as it was;
//   - fill(d, v, n) and copy(d, s, n) replace memory.fill and memory.copy:
//     they split an operation longer than BulkChunk into chunks, charging
//     each, so that even a single 4 GiB fill reaches tick, and so the
//     deadline and the collector, every BulkChunk bytes. An operation that
//     is out of bounds is left whole to the original instruction, which traps
//     before writing anything, as it would have. copy goes backwards when
//     the destination is above the source, as memory.copy behaves as if it
//     used a temporary buffer.
//
// memory.init and the table instructions only get the charge: their length
// is bounded by a data or element segment, which is part of the module, or
// by the table size, so a single one cannot run long; a loop of them can,
// and is charged.

// bulkShift is log2 of BulkBytesPerStep, the bytes of a bulk operation
// charged as one unit of fuel. memset and memmove move 10-30 bytes per
// nanosecond here, and a unit of fuel is 1-12 ns of ordinary guest code (see
// FuelPerTick), so 64 bytes a unit keeps a tick at most every MiB.
const (
	bulkShift        = 6
	BulkBytesPerStep = 1 << bulkShift
)

// BulkChunk is the longest piece of a memory.fill or memory.copy done
// between two charges: 1 MiB, some tens of microseconds.
const BulkChunk = 1 << 20

// Function types of the helpers, as encoded in the type section.
var (
	typeCharge = []byte{0x60, 1, 0x7f, 1, 0x7f}       // (i32) -> i32
	TypeBulk   = []byte{0x60, 3, 0x7f, 0x7f, 0x7f, 0} // (i32, i32, i32) -> ()
)

// Opcodes used only by the helpers.
const (
	opBr           = 0x0c
	opBrIf         = 0x0d
	opElse         = 0x05
	opDrop         = 0x1a
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opMemorySize   = 0x3f
	opI32LeU       = 0x4d
	opI64GtU       = 0x56
	opI32Add       = 0x6a
	opI32ShrU      = 0x76
	opI64Add       = 0x7c
	opI64Shl       = 0x86
	opI64ExtendU32 = 0xad
	miscMemInit    = 8
	miscMemCopy    = 10
	miscMemFill    = 11
	miscTableInit  = 12
	miscTableCopy  = 14
	miscTableFill  = 17
)

// bulkFuncs are the indices of the helper functions; zero values until the
// function section has been rewritten.
type bulkFuncs struct {
	enabled bool   // the helpers exist (the function section was rewritten)
	memory  bool   // fill and copy exist: the module has a memory
	charge  uint32 // charge(n) -> n
	fill    uint32 // fill(d, v, n)
	copy    uint32 // copy(d, s, n)
}

// functions appends the helpers' types to the function section: charge
// always, fill and copy when the module has a memory for them to use. They
// come after the module's own functions, so no index moves.
func (in *instrumenter) functions(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n := uint32(0)
	if b != nil {
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
	}
	in.definedFuncs = n
	in.code.funcs = in.importedFuncs + n
	next := in.importedFuncs + 1 + n // after the tick import and the module's own
	in.code.bulk = bulkFuncs{enabled: true, memory: in.hasMemory, charge: next, fill: next + 1, copy: next + 2}
	added := []uint32{in.chargeType}
	if in.hasMemory {
		added = append(added, in.bulkType, in.bulkType)
	}
	out := appendU32(nil, n+uint32(len(added)))
	out = append(out, b[r.pos:]...)
	for _, t := range added {
		out = appendU32(out, t)
	}
	return out, nil
}

// helperBodies returns the code section entries (size-prefixed bodies) of
// the helpers functions() declared.
func (in *instrumenter) helperBodies() (count uint32, out []byte) {
	bodies := [][]byte{chargeBody(in.fuelGlobal, in.tickFunc)}
	if in.hasMemory {
		bodies = append(bodies, fillBody(in.fuelGlobal, in.tickFunc), copyBody(in.fuelGlobal, in.tickFunc))
	}
	for _, b := range bodies {
		out = append(appendU32(out, uint32(len(b))), b...)
	}
	return uint32(len(bodies)), out
}

// chargeBody is charge(n) -> n:
//
//	fuel = fuel - n>>bulkShift
//	if fuel <= 0 { fuel = tick() }
//	return n
func chargeBody(fuel, tick uint32) []byte {
	c := chargeLocal([]byte{0}, fuel, tick, 0) // no locals
	return append(c, opLocalGet, 0, opEnd)
}

// i32c appends i32.const v.
func i32c(c []byte, v int32) []byte { return appendSLEB32(append(c, opI32Const), v) }

// outOfBounds appends code leaving 1 on the stack when local a + local n,
// computed without overflow, is past the end of memory 0.
func outOfBounds(c []byte, a, n byte) []byte {
	c = append(c, opLocalGet, a, opI64ExtendU32, opLocalGet, n, opI64ExtendU32, opI64Add)
	return append(c, opMemorySize, 0, opI64ExtendU32, opI64Const, 16, opI64Shl, opI64GtU)
}

// chargeLocal appends the body of charge, inline, for the length in local
// n: fill and copy do not call charge, as a call more on every memmove of a
// Go guest showed in the benchmarks.
func chargeLocal(c []byte, fuel, tick uint32, n byte) []byte {
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opLocalGet, n, opI32Const, bulkShift, opI32ShrU, opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	return appendTickIfOut(c, fuel, tick)
}

// chargeChunk appends fuel -= BulkChunk/BulkBytesPerStep and the tick
// check.
func chargeChunk(c []byte, fuel, tick uint32) []byte {
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(i32c(c, BulkChunk/BulkBytesPerStep), opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	return appendTickIfOut(c, fuel, tick)
}

// appendTickIfOut appends if fuel <= 0 { fuel = tick() }.
func appendTickIfOut(c []byte, fuel, tick uint32) []byte {
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 0, opI32LeS, opIf, blockTypeNone)
	c = appendU32(append(c, opCall), tick)
	c = appendU32(append(c, opGlobalSet), fuel)
	return append(c, opEnd)
}

// addConst appends local x = local x + v.
func addConst(c []byte, x byte, v int32) []byte {
	return append(i32c(append(c, opLocalGet, x), v), opI32Add, opLocalSet, x)
}

// fillBody is fill(d, v, n), memory.fill in chunks:
//
//	for n > BulkChunk && d+n <= memory size {
//		memory.fill(d, v, BulkChunk); charge(BulkChunk)
//		d += BulkChunk; n -= BulkChunk
//	}
//	charge(n); memory.fill(d, v, n)
func fillBody(fuel, tick uint32) []byte {
	const d, v, n = 0, 1, 2
	c := []byte{0, opBlock, blockTypeNone, opLoop, blockTypeNone}
	c = append(i32c(append(c, opLocalGet, n), BulkChunk), opI32LeU, opBrIf, 1)
	c = append(outOfBounds(c, d, n), opBrIf, 1)
	c = append(i32c(append(c, opLocalGet, d, opLocalGet, v), BulkChunk), opPrefixMisc, miscMemFill, 0)
	c = chargeChunk(c, fuel, tick)
	c = addConst(addConst(c, d, BulkChunk), n, -BulkChunk)
	c = append(c, opBr, 0, opEnd, opEnd)
	c = chargeLocal(c, fuel, tick, n)
	return append(c, opLocalGet, d, opLocalGet, v, opLocalGet, n, opPrefixMisc, miscMemFill, 0, opEnd)
}

// copyBody is copy(d, s, n), memory.copy in chunks, front to back when the
// destination is below the source and back to front otherwise, so that
// overlapping ranges copy as memory.copy does:
//
//	for n > BulkChunk && d+n <= memory size && s+n <= memory size {
//		if d <= s {
//			memory.copy(d, s, BulkChunk); d += BulkChunk; s += BulkChunk
//		} else {
//			memory.copy(d+n-BulkChunk, s+n-BulkChunk, BulkChunk)
//		}
//		charge(BulkChunk); n -= BulkChunk
//	}
//	charge(n); memory.copy(d, s, n)
func copyBody(fuel, tick uint32) []byte {
	const d, s, n = 0, 1, 2
	c := []byte{0, opBlock, blockTypeNone, opLoop, blockTypeNone}
	c = append(i32c(append(c, opLocalGet, n), BulkChunk), opI32LeU, opBrIf, 1)
	c = append(outOfBounds(c, d, n), opBrIf, 1)
	c = append(outOfBounds(c, s, n), opBrIf, 1)
	c = append(c, opLocalGet, d, opLocalGet, s, opI32LeU, opIf, blockTypeNone)
	c = append(i32c(append(c, opLocalGet, d, opLocalGet, s), BulkChunk), opPrefixMisc, miscMemCopy, 0, 0)
	c = addConst(addConst(c, d, BulkChunk), s, BulkChunk)
	c = append(c, opElse)
	for _, x := range []byte{d, s} { // x + n - BulkChunk
		c = append(i32c(append(c, opLocalGet, x, opLocalGet, n, opI32Add), BulkChunk), opI32Sub)
	}
	c = append(i32c(c, BulkChunk), opPrefixMisc, miscMemCopy, 0, 0, opEnd)
	c = chargeChunk(c, fuel, tick)
	c = addConst(c, n, -BulkChunk)
	c = append(c, opBr, 0, opEnd, opEnd)
	c = chargeLocal(c, fuel, tick, n)
	return append(c, opLocalGet, d, opLocalGet, s, opLocalGet, n, opPrefixMisc, miscMemCopy, 0, 0, opEnd)
}

// misc rewrites a 0xfc-prefixed instruction, whose opcode byte has been
// read at start and whose sub-opcode follows in r: bulk memory and table
// instructions get charged (see above); the others are copied as they are.
// It returns where the bytes still to be copied verbatim start.
func (c *codeRewriter) misc(r *wasmReader, out []byte, start int) ([]byte, int, error) {
	sub, err := r.u32()
	if err != nil {
		return nil, 0, err
	}
	if !c.bulk.enabled {
		return out, start, skipMiscImmediates(r, sub)
	}
	switch sub {
	case miscMemFill, miscMemCopy:
		immStart := r.pos
		if err := skipMiscImmediates(r, sub); err != nil {
			return nil, 0, err
		}
		// Memory indices other than 0 are invalid in WebAssembly 2.0:
		// leave them for the compiler to refuse.
		if !c.bulk.memory || !allZero(r.b[immStart:r.pos]) {
			return out, start, nil
		}
		fn := c.bulk.fill
		if sub == miscMemCopy {
			fn = c.bulk.copy
		}
		return appendU32(append(out, opCall), fn), r.pos, nil
	case miscMemInit, miscTableInit, miscTableCopy, miscTableFill:
		out = appendU32(append(out, opCall), c.bulk.charge)
	}
	return out, start, skipMiscImmediates(r, sub)
}

// allZero reports whether b is all zero bytes.
func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
