package instrument

import "fmt"

// Opcodes the instrumentation reads or writes, from the WebAssembly 2.0
// binary format.
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opEnd         = 0x0b
	opBrTable     = 0x0e
	opCall        = 0x10
	opSelectT     = 0x1c
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opI32Const    = 0x41
	opI64Const    = 0x42
	opF32Const    = 0x43
	opF64Const    = 0x44
	opI32Eqz      = 0x45
	opI32LeS      = 0x4c
	opI32Sub      = 0x6b
	opRefNull     = 0xd0
	opRefFunc     = 0xd2
	opPrefixMisc  = 0xfc
	opPrefixSIMD  = 0xfd
	blockTypeNone = 0x40
)

// codeRewriter copies instruction sequences, shifting the function indices
// they mention past the inserted import and adding the fuel checks of
// instrument.go at function entries and loop headers.
type codeRewriter struct {
	importedFuncs uint32 // functions imported by the original module
	// funcs and globals count the original module's functions and
	// globals (imported and its own). An index at or past them is invalid
	// in the original but would name what the rewrite adds (the bulk
	// helpers, the fuel global): a guest could then reset its own fuel.
	// The rewrite refuses such an index instead of letting it become
	// valid. Both are known before any code that uses them is read: the
	// function and global sections come before the export, start,
	// element and code sections.
	funcs, globals uint32
	entryCheck     []byte // inserted at the start of every function body
	loopCheck      []byte // inserted after every loop instruction
	bulk           bulkFuncs
}

// shiftFunc maps a function index of the original module to the
// instrumented one, where the tick import sits after the original imports.
func (c *codeRewriter) shiftFunc(idx uint32) (uint32, error) {
	switch {
	case idx >= c.funcs:
		return 0, fmt.Errorf("function index %d out of range (%d functions)", idx, c.funcs)
	case idx < c.importedFuncs:
		return idx, nil
	}
	return idx + 1, nil
}

// checkGlobal refuses a global index the original module does not have.
func (c *codeRewriter) checkGlobal(idx uint32) error {
	if idx >= c.globals {
		return fmt.Errorf("global index %d out of range (%d globals)", idx, c.globals)
	}
	return nil
}

// expr copies instructions from r to out up to and including the end that
// closes the sequence, as in a constant expression or a function body.
// Copying is lazy: runs of untouched bytes are appended in one go.
func (c *codeRewriter) expr(r *wasmReader, out []byte) ([]byte, error) {
	flushed := r.pos
	flush := func(upTo int) {
		out = append(out, r.b[flushed:upTo]...)
		flushed = upTo
	}
	depth := 0
	for {
		start := r.pos
		op, err := r.byte()
		if err != nil {
			return nil, fmt.Errorf("instruction at offset %d: %w", start, err)
		}
		switch {
		case op == opBlock || op == opIf:
			depth++
			err = r.skipLEB(5) // block type: s33
		case op == opLoop:
			depth++
			if err = r.skipLEB(5); err == nil {
				flush(r.pos)
				out = append(out, c.loopCheck...)
			}
		case op == opEnd:
			depth--
			if depth < 0 {
				flush(r.pos)
				return out, nil
			}
		case op == opPrefixMisc:
			flush(start)
			out, flushed, err = c.misc(r, out, start)
		case op == opCall || op == opRefFunc:
			var idx uint32
			if idx, err = r.u32(); err == nil {
				if idx, err = c.shiftFunc(idx); err == nil {
					flush(start)
					out = appendU32(append(out, op), idx)
					flushed = r.pos
				}
			}
		case op == opGlobalGet || op == opGlobalSet:
			var idx uint32
			if idx, err = r.u32(); err == nil {
				err = c.checkGlobal(idx)
			}
		default:
			err = skipImmediates(r, op)
		}
		if err != nil {
			return nil, fmt.Errorf("instruction at offset %d: %w", start, err)
		}
	}
}

// body rewrites one function body of the code section (locals and
// expression, without the size prefix).
func (c *codeRewriter) body(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	groups, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int64(groups) > int64(len(b)) {
		return nil, fmt.Errorf("%d groups of locals declared in %d bytes", groups, len(b))
	}
	locals := uint64(0)
	for range groups {
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		if locals += uint64(n); locals > maxLocals {
			return nil, fmt.Errorf("more than %d locals", maxLocals)
		}
		if _, err := r.byte(); err != nil { // value type
			return nil, err
		}
	}
	out := make([]byte, 0, len(b)+len(c.entryCheck)+len(c.loopCheck)*4)
	out = append(out, b[:r.pos]...)
	out = append(out, c.entryCheck...)
	if out, err = c.expr(r, out); err != nil {
		return nil, err
	}
	if !r.done() {
		return nil, fmt.Errorf("%d bytes after the end of a function body", len(b)-r.pos)
	}
	return out, nil
}

// skipImmediates skips the immediates of an instruction whose opcode op was
// just read and which needs no rewriting. It knows every instruction of
// WebAssembly 2.0, the set wazero compiles by default; anything else is an
// error rather than a guess, as a misread immediate would corrupt the rest.
func skipImmediates(r *wasmReader, op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b:
		return nil // unreachable, nop, else, return, drop, select
	case op == 0x0c || op == 0x0d: // br, br_if
		return r.skipLEB(5)
	case op == opBrTable:
		n, err := r.u32()
		if err != nil {
			return err
		}
		for range uint64(n) + 1 {
			if err := r.skipLEB(5); err != nil {
				return err
			}
		}
		return nil
	case op == 0x11: // call_indirect: type, table
		return skipU32s(r, 2)
	case op == opSelectT:
		n, err := r.u32()
		if err != nil {
			return err
		}
		_, err = r.bytes(uint64(n))
		return err
	case op >= 0x20 && op <= 0x26: // locals, globals, table.get/set
		return r.skipLEB(5)
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		return skipU32s(r, 2)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		return r.skipLEB(5)
	case op == opI32Const:
		return r.skipLEB(5)
	case op == opI64Const:
		return r.skipLEB(10)
	case op == opF32Const:
		_, err := r.bytes(4)
		return err
	case op == opF64Const:
		_, err := r.bytes(8)
		return err
	case op >= 0x45 && op <= 0xc4: // numeric, no immediates
		return nil
	case op == opRefNull:
		_, err := r.byte()
		return err
	case op == 0xd1: // ref.is_null
		return nil
	case op == opPrefixMisc:
		sub, err := r.u32()
		if err != nil {
			return err
		}
		return skipMiscImmediates(r, sub)
	case op == opPrefixSIMD:
		return skipSIMD(r)
	}
	return fmt.Errorf("unsupported opcode %#x", op)
}

// skipU32s skips n unsigned LEB128 numbers.
func skipU32s(r *wasmReader, n int) error {
	for range n {
		if err := r.skipLEB(5); err != nil {
			return err
		}
	}
	return nil
}

// skipMiscImmediates skips the immediates of a 0xfc-prefixed instruction,
// whose sub-opcode sub was just read: saturating truncations, bulk memory
// and table instructions.
func skipMiscImmediates(r *wasmReader, sub uint32) error {
	switch {
	case sub <= 7: // trunc_sat
		return nil
	case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
		return skipU32s(r, 2)
	case sub <= 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
		return r.skipLEB(5)
	}
	return fmt.Errorf("unsupported opcode 0xfc %d", sub)
}

// skipSIMD skips a 0xfd-prefixed (vector) instruction.
func skipSIMD(r *wasmReader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 0x0b || sub == 0x5c || sub == 0x5d: // loads and stores: memarg
		return skipU32s(r, 2)
	case sub == 0x0c || sub == 0x0d: // v128.const, i8x16.shuffle
		_, err = r.bytes(16)
		return err
	case sub >= 0x15 && sub <= 0x22: // extract and replace lane
		_, err = r.byte()
		return err
	case sub >= 0x54 && sub <= 0x5b: // load and store lane: memarg, lane
		if err = skipU32s(r, 2); err == nil {
			_, err = r.byte()
		}
		return err
	case sub <= 0xff:
		return nil
	}
	return fmt.Errorf("unsupported opcode 0xfd %d", sub)
}
