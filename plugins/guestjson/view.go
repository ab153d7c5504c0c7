package guestjson

import "unsafe"

// View returns b as a string without copying it.
//
// The reader works on strings; copying every input (up to the host's body
// limit) just to read it would be the largest allocation of a mapping call,
// and in the WebAssembly guest allocation is costly. This is sound because a
// hook only reads its input while it runs and everything it returns is
// appended into a fresh buffer: no string derived from the view outlives the
// call (InputError messages never quote the input for this reason).
func View(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Bytes returns v as a byte slice without copying it. The slice aliases the
// input v was read from: it must not be modified, nor kept beyond the call.
func (v Value) Bytes() []byte {
	if v == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(string(v)), len(v))
}
