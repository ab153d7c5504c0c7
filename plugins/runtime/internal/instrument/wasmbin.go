package instrument

import (
	"errors"
	"fmt"
)

// wasmReader decodes the WebAssembly binary format: the few primitives the
// instrumentation in instrument.go needs to walk a module.
type wasmReader struct {
	b   []byte
	pos int
}

var errTruncated = errors.New("unexpected end of module")

func (r *wasmReader) done() bool { return r.pos >= len(r.b) }

func (r *wasmReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// bytes returns the next n bytes, without copying.
func (r *wasmReader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, errTruncated
	}
	out := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return out, nil
}

// u32 decodes an unsigned LEB128 number of at most 32 bits.
func (r *wasmReader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				return 0, fmt.Errorf("u32 out of range at offset %d", r.pos)
			}
			return uint32(v), nil
		}
	}
	return 0, fmt.Errorf("u32 too long at offset %d", r.pos)
}

// s32 decodes a signed LEB128 number of at most 32 bits.
func (r *wasmReader) s32() (int32, error) {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if shift < 28 && c&0x40 != 0 {
				v |= -1 << (shift + 7) // sign-extend
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, fmt.Errorf("s32 out of range at offset %d", r.pos)
			}
			return int32(v), nil
		}
	}
	return 0, fmt.Errorf("s32 too long at offset %d", r.pos)
}

// skipLEB skips a signed or unsigned LEB128 number of at most maxBytes bytes.
func (r *wasmReader) skipLEB(maxBytes int) error {
	for range maxBytes {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return fmt.Errorf("LEB128 number too long at offset %d", r.pos)
}

// name skips a length-prefixed UTF-8 name and returns it.
func (r *wasmReader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(uint64(n))
	return string(b), err
}

// appendU32 appends v as unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends v as a signed LEB128 number.
func appendS32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if x == 0 && c&0x40 == 0 || x == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendSection appends a section with id and content.
func appendSection(b []byte, id byte, content []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(content)))
	return append(b, content...)
}

// appendName appends s as a length-prefixed name.
func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// errTrailing is the error for a section with n bytes after its entries,
// which a rewrite would drop, turning an invalid module into a valid one.
func errTrailing(n int) error {
	return fmt.Errorf("%d bytes after the last entry of the section", n)
}
