package instrument

import "fmt"

// wazero (v1.12) sizes its slices by the counts a module declares before it
// reads the entries: a 7-byte data section declaring 2^28 segments made it
// allocate gigabytes and the process die, and a type with 2^21 parameters
// cost 16 MB before the module was found truncated. Modules reach wazero
// only through instrument, so instrument refuses declared counts that the
// bytes present cannot hold, in the sections it does not otherwise walk
// entry by entry, and in the locals of function bodies.

// maxLocals bounds the locals one function declares. Go's compiler
// declares tens; wasm tools a few thousand at most.
const maxLocals = 50_000

// checkCounts refuses a module whose sections declare more entries than
// they have bytes (every entry takes at least one).
func checkCounts(sections []wasmSection, moduleSize int) error {
	for _, s := range sections {
		switch s.id {
		case secCustom:
			continue
		case secStart:
			continue
		case 12: // data count: a number, not a vector
			n, err := (&wasmReader{b: s.content}).u32()
			if err != nil {
				return fmt.Errorf("section 12: %w", err)
			}
			if int64(n) > int64(moduleSize) {
				return fmt.Errorf("section 12: %d data segments declared in a module of %d bytes", n, moduleSize)
			}
			continue
		}
		r := &wasmReader{b: s.content}
		n, err := r.u32()
		if err != nil {
			return fmt.Errorf("section %d: %w", s.id, err)
		}
		if int64(n) > int64(len(s.content)) {
			return fmt.Errorf("section %d: %d entries declared in %d bytes", s.id, n, len(s.content))
		}
		if s.id == 11 {
			if err := checkData(r, n); err != nil {
				return fmt.Errorf("section 11: %w", err)
			}
		}
	}
	return nil
}

// checkData walks the n data segments in r, refusing byte vectors longer
// than what is left (WebAssembly 2.0, section 5.5.14).
func checkData(r *wasmReader, n uint32) error {
	var skip codeRewriter // copies constant expressions, rewriting nothing
	for i := range n {
		flag, err := r.u32()
		if err != nil {
			return err
		}
		if flag > 2 {
			return fmt.Errorf("data segment %d: unknown flag %d", i, flag)
		}
		if flag == 2 { // memory index
			if err := r.skipLEB(5); err != nil {
				return err
			}
		}
		if flag != 1 { // active: offset expression
			if _, err := skip.expr(r, nil); err != nil {
				return fmt.Errorf("data segment %d: %w", i, err)
			}
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		if _, err := r.bytes(uint64(size)); err != nil {
			return fmt.Errorf("data segment %d: %d bytes declared: %w", i, size, err)
		}
	}
	return nil
}
