package runtime

// The fuel the instrumentation adds (instrument.go): the global that holds
// it, and the checks inserted at function entries and loop headers.

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
	out = appendSLEB32(out, fuelPerTick)
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
//	if fuel <= -maxLoopSteps { unreachable }
func loopCheck(fuel uint32) []byte {
	c := append(takeFuel(fuel), opI32Const)
	c = appendSLEB32(c, -maxLoopSteps)
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
