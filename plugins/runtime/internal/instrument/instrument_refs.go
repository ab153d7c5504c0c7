package instrument

import (
	"fmt"
	"strings"
)

// The rewrites below keep every reference to a function pointing at the same
// function once the tick import has shifted the indices of the module's own
// functions by one.

// exports shifts the indices of exported functions and exports the fuel.
func (in *instrumenter) exports(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n := uint32(0)
	if b != nil {
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
	}
	out := appendU32(make([]byte, 0, len(b)+32), n+1)
	for range n {
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, TickModule) {
			return nil, fmt.Errorf("export %q: names starting with %q are reserved for the host", name, TickModule)
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		switch kind {
		case 0x00:
			idx, err = in.code.shiftFunc(idx)
		case 0x03:
			err = in.code.checkGlobal(idx)
		}
		if err != nil {
			return nil, err
		}
		out = appendU32(append(appendName(out, name), kind), idx)
	}
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	return appendU32(append(appendName(out, FuelExport), 0x03), in.fuelGlobal), nil
}

// start shifts the index of the start function.
func (in *instrumenter) start(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	idx, err := r.u32()
	if err != nil {
		return nil, err
	}
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	if idx, err = in.code.shiftFunc(idx); err != nil {
		return nil, err
	}
	return appendU32(nil, idx), nil
}

// elements rewrites element segments, which list functions by index or by
// ref.func expressions. The segment's flag says which form and which
// optional fields follow (WebAssembly 2.0, section 5.5.12).
func (in *instrumenter) elements(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(b)+len(b)/4), n)
	for i := range n {
		flag, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flag > 7 {
			return nil, fmt.Errorf("element segment %d: unknown flag %d", i, flag)
		}
		out = appendU32(out, flag)
		if flag == 2 || flag == 6 { // explicit table index
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			out = appendU32(out, idx)
		}
		if flag&1 == 0 { // active: offset expression
			if out, err = in.code.expr(r, out); err != nil {
				return nil, err
			}
		}
		if flag&3 != 0 { // element kind or reference type
			kind, err := r.byte()
			if err != nil {
				return nil, err
			}
			out = append(out, kind)
		}
		count, err := r.u32()
		if err != nil {
			return nil, err
		}
		out = appendU32(out, count)
		for range count {
			if flag&4 != 0 { // expressions
				out, err = in.code.expr(r, out)
			} else { // function indices
				var idx uint32
				if idx, err = r.u32(); err == nil {
					if idx, err = in.code.shiftFunc(idx); err == nil {
						out = appendU32(out, idx)
					}
				}
			}
			if err != nil {
				return nil, fmt.Errorf("element segment %d: %w", i, err)
			}
		}
	}
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	return out, nil
}

// codes rewrites every function body.
func (in *instrumenter) codes(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(b)+len(b)/8), n)
	countLen := len(out)
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		if body, err = in.code.body(body); err != nil {
			return nil, fmt.Errorf("function %d: %w", in.importedFuncs+i, err)
		}
		out = append(appendU32(out, uint32(len(body))), body...)
	}
	if !r.done() {
		return nil, errTrailing(len(b) - r.pos)
	}
	if n != in.definedFuncs {
		return nil, fmt.Errorf("%d function bodies for %d functions", n, in.definedFuncs)
	}
	count, helpers := in.helperBodies()
	out = append(out, helpers...)
	return append(appendU32(nil, n+count), out[countLen:]...), nil
}

// custom shifts the function indices of the "name" section, which wazero
// uses to name functions in stack traces, and keeps other custom sections
// as they are.
//
// A name section that does not parse exactly (a subsection whose size is
// not that of its content) is refused, not dropped or kept: wazero refuses
// some such sections and reads others past their subsection's end, into
// the bytes after it, which the rewrite changes. Keeping or dropping one
// could therefore turn a module wazero refuses into one it accepts, or the
// other way round. A toolchain writes exact name sections.
func (in *instrumenter) custom(b []byte) ([]byte, error) {
	r := &wasmReader{b: b}
	name, err := r.name()
	if err != nil || name != "name" {
		return b, nil
	}
	out, err := in.names(r, append([]byte(nil), b[:r.pos]...))
	if err != nil {
		return nil, fmt.Errorf("malformed name section: %w", err)
	}
	return out, nil
}

// names rewrites the subsections of the name section that key on function
// indices: function names (1), and local and label names (2, 3).
func (in *instrumenter) names(r *wasmReader, out []byte) ([]byte, error) {
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		content, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		switch {
		case id == 0: // the module's name, read by wazero whatever the size says
			m := &wasmReader{b: content}
			if _, err := m.name(); err != nil || !m.done() {
				return nil, fmt.Errorf("module name subsection of %d bytes is not one name", len(content))
			}
		case id <= 3:
			if content, err = in.nameMap(content, id != 1); err != nil {
				return nil, err
			}
		}
		out = appendSection(out, id, content)
	}
	return out, nil
}

// nameMap shifts the function indices of a name map (index, name) or, when
// nested, of an indirect name map (index, name map).
func (in *instrumenter) nameMap(b []byte, nested bool) ([]byte, error) {
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(b)+8), n)
	for range n {
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		// Names are not validated (a runtime ignores a bad name section),
		// so an index out of range stays as it is rather than refusing
		// the module.
		if shifted, err := in.code.shiftFunc(idx); err == nil {
			idx = shifted
		}
		out = appendU32(out, idx)
		start := r.pos
		if nested {
			inner, err := r.u32()
			if err != nil {
				return nil, err
			}
			for range inner {
				if err := r.skipLEB(5); err != nil {
					return nil, err
				}
				if _, err := r.name(); err != nil {
					return nil, err
				}
			}
		} else if _, err := r.name(); err != nil {
			return nil, err
		}
		out = append(out, b[start:r.pos]...)
	}
	if !r.done() {
		return nil, fmt.Errorf("%d bytes after a name map", len(b)-r.pos)
	}
	return out, nil
}
