package instrument

// The fuel the instrumentation adds (instrument.go): the global that holds
// it, and the checks inserted at function entries and loop headers.

// FuelPerTick is how many function entries and loop iterations an
// instrumented guest runs between two calls of tick (see instrument.go), as
// long as it enters functions. It bounds how late a deadline is noticed and
// how long the host's garbage collector may wait for a running guest: a Go
// guest gets through it in roughly 20-200 µs. A tick costs about as much as
// a few hundred steps, so a much smaller value would show in every call.
const FuelPerTick = 1 << 14

// MaxLoopSteps is how many loop iterations past its fuel an instrumented
// guest may run without entering a function, which would refill it, before
// it traps (see instrument.go). Such a loop is not checked against its
// deadline, so this bounds it instead: the tightest loop, a bare branch back,
// runs 2^26 iterations in 70-350 ms here, about the default budget. A mapping
// has no business running a longer loop without a call: scanning the largest
// input (4 MiB) byte by byte takes 4M iterations.
const MaxLoopSteps = 1 << 26

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
	in.code.globals = in.importedGlobals + n
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
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	in.fuelGlobal = in.importedGlobals + n
	out = append(out, 0x7f, 0x01, opI32Const) // mutable i32
	out = appendSLEB32(out, FuelPerTick)
	out = append(out, opEnd)
	in.code.entryCheck = entryCheck(in.fuelGlobal, in.tickFunc)
	in.code.loopCheck = loopCheck(in.fuelGlobal)
	return out, nil
}

// entryCheck is the code inserted at function entries:
//
//	fuel = fuel - 1
//	if fuel <= 0 { fuel = tick() }
func entryCheck(fuel, tick uint32) []byte {
	c := takeFuel(fuel)
	c = append(c, opI32Const, 0, opI32LeS, opIf, blockTypeNone)
	c = appendU32(append(c, opCall), tick)
	c = appendU32(append(c, opGlobalSet), fuel)
	return append(c, opEnd)
}

// loopCheck is the code inserted at loop headers:
//
//	fuel = fuel - 1
//	if fuel <= -MaxLoopSteps { unreachable }
func loopCheck(fuel uint32) []byte {
	c := append(takeFuel(fuel), opI32Const)
	c = appendSLEB32(c, -MaxLoopSteps)
	return append(c, opI32LeS, opIf, blockTypeNone, opUnreachable, opEnd)
}

// takeFuel is fuel = fuel - 1, leaving the new value on the stack.
func takeFuel(fuel uint32) []byte {
	var c []byte
	c = appendU32(append(c, opGlobalGet), fuel)
	c = append(c, opI32Const, 1, opI32Sub)
	c = appendU32(append(c, opGlobalSet), fuel)
	return appendU32(append(c, opGlobalGet), fuel)
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
