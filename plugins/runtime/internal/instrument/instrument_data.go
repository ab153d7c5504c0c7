package instrument

import "fmt"

// Why the data section is rewritten: Go's linker splits a module's data at
// every run of zeros longer than a segment's few bytes of overhead, so a
// default plugin has about 41,000 active data segments holding 1.3 MB.
// That is cheap in the file, not in wazero: it keeps each segment as a
// struct with two slices of its own for as long as the module is compiled,
// about 4 MB a module, and every instance gets a slice header per segment
// and copies them one by one. mergeData joins neighbouring segments,
// writing the zeros between them, into a few dozen: the memory an instance
// starts with is byte for byte the same.

// maxDataGap is the longest run of zeros mergeData writes to join two
// segments: wazero spends more than that on a segment.
const maxDataGap = 256

// maxDataRuns bounds the joined segments whose ranges a gap is checked
// against; past it, segments are kept as they come (a Go guest has a few
// dozen).
const maxDataRuns = 1024

// overlaps reports whether any of segs writes a byte of [from, to): the
// zeros that join two segments must not overwrite what an earlier one
// wrote, since segments are applied in order.
func overlaps(segs []dataSegment, from, to uint64) bool {
	for _, s := range segs {
		if uint64(s.offset) < to && uint64(s.offset)+uint64(len(s.init)) > from {
			return true
		}
	}
	return false
}

// dataSegment is an active segment of memory 0 at a constant offset.
type dataSegment struct {
	offset uint32
	init   []byte
}

// mergeData returns the data section b with neighbouring segments joined.
// It returns b itself when the section holds a segment it does not
// rewrite (passive, another memory, an offset that is not an i32.const),
// or when the module has a data count section: only then may code refer to
// segments by index (memory.init, data.drop), and joining them would
// renumber them.
func mergeData(b []byte, hasDataCount bool) ([]byte, error) {
	if hasDataCount {
		return b, nil
	}
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	merged := make([]dataSegment, 0, 16)
	for i := range n {
		s, ok, err := readActiveSegment(r)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		if !ok {
			return b, nil
		}
		if k := len(merged) - 1; k >= 0 && len(merged) <= maxDataRuns {
			last := &merged[k]
			lastEnd := uint64(last.offset) + uint64(len(last.init))
			if gap := uint64(s.offset) - lastEnd; uint64(s.offset) >= lastEnd && gap <= maxDataGap &&
				!overlaps(merged[:k], lastEnd, uint64(s.offset)) {
				last.init = append(last.init, make([]byte, gap)...)
				last.init = append(last.init, s.init...)
				continue
			}
		}
		// A copy, so that appending to it never writes into b.
		merged = append(merged, dataSegment{offset: s.offset, init: append([]byte(nil), s.init...)})
	}
	if !r.done() {
		return nil, errTrailing(len(r.b) - r.pos)
	}
	size := 0
	for _, s := range merged {
		size += len(s.init) + 16
	}
	out := appendU32(make([]byte, 0, size+5), uint32(len(merged)))
	for _, s := range merged {
		out = append(out, 0x00, 0x41) // active, memory 0; i32.const
		out = appendS32(out, int32(s.offset))
		out = append(out, 0x0b) // end
		out = appendU32(out, uint32(len(s.init)))
		out = append(out, s.init...)
	}
	return out, nil
}

// readActiveSegment reads one data segment; ok is false when it is not an
// active segment of memory 0 at an i32.const offset.
func readActiveSegment(r *wasmReader) (s dataSegment, ok bool, err error) {
	flag, err := r.u32()
	if err != nil || flag != 0 {
		return s, false, err
	}
	op, err := r.byte()
	if err != nil || op != 0x41 {
		return s, false, err
	}
	v, err := r.s32()
	if err != nil {
		return s, false, err
	}
	if end, err := r.byte(); err != nil || end != 0x0b {
		return s, false, err
	}
	size, err := r.u32()
	if err != nil {
		return s, false, err
	}
	init, err := r.bytes(uint64(size))
	if err != nil {
		return s, false, err
	}
	return dataSegment{offset: uint32(v), init: init}, true, nil
}
