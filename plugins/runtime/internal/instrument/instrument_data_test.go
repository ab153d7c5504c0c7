package instrument

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
)

// dataSection encodes segments as a data section's content.
func dataSection(segs []dataSegment) []byte {
	b := appendU32(nil, uint32(len(segs)))
	for _, s := range segs {
		b = append(b, 0x00, 0x41)
		b = appendS32(b, int32(s.offset))
		b = append(b, 0x0b)
		b = appendU32(b, uint32(len(s.init)))
		b = append(b, s.init...)
	}
	return b
}

// memoryImage applies the active segments of data section b, in order, to
// a zeroed memory of size bytes, as instantiation does; ok is false when a
// segment lies outside the memory (instantiation fails).
func memoryImage(tb testing.TB, b []byte, size int) (mem []byte, segments int, ok bool) {
	tb.Helper()
	r := &wasmReader{b: b}
	n, err := r.u32()
	if err != nil {
		tb.Fatal(err)
	}
	mem = make([]byte, size)
	ok = true
	for range n {
		s, active, err := readActiveSegment(r)
		if err != nil || !active {
			tb.Fatalf("segment: active %v, %v", active, err)
		}
		if uint64(s.offset)+uint64(len(s.init)) > uint64(size) {
			ok = false
			continue
		}
		copy(mem[s.offset:], s.init)
	}
	if !r.done() {
		tb.Fatal("trailing bytes")
	}
	return mem, int(n), ok
}

func TestMergeDataSegments(t *testing.T) {
	const size = 4096
	check := func(t *testing.T, segs []dataSegment) int {
		t.Helper()
		orig := dataSection(segs)
		merged, err := mergeData(orig, false)
		if err != nil {
			t.Fatal(err)
		}
		want, _, wantOK := memoryImage(t, orig, size)
		got, n, gotOK := memoryImage(t, merged, size)
		if gotOK != wantOK || wantOK && !bytes.Equal(got, want) {
			t.Fatalf("segments %v: merged memory differs (in bounds %v, want %v)", segs, gotOK, wantOK)
		}
		return n
	}
	seg := func(off uint32, s string) dataSegment { return dataSegment{off, []byte(s)} }

	t.Run("neighbours join", func(t *testing.T) {
		if n := check(t, []dataSegment{seg(0, "ab"), seg(10, "cd"), seg(10+2+maxDataGap, "ef")}); n != 1 {
			t.Errorf("%d segments, want 1", n)
		}
	})
	t.Run("a wide gap stays", func(t *testing.T) {
		if n := check(t, []dataSegment{seg(0, "ab"), seg(2+maxDataGap+1, "cd")}); n != 2 {
			t.Errorf("%d segments, want 2", n)
		}
	})
	t.Run("no zeros over earlier data", func(t *testing.T) {
		// The third segment's gap [3, 8) covers bytes the first wrote.
		if n := check(t, []dataSegment{seg(0, "abcdefghij"), seg(1, "X"), seg(8, "Y")}); n != 3 {
			t.Errorf("%d segments, want 3", n)
		}
	})
	t.Run("out of bounds stays out of bounds", func(t *testing.T) {
		check(t, []dataSegment{seg(size-4, "ab"), seg(size-1, "cd")})
		check(t, []dataSegment{seg(0xffffffff, "a")}) // i32.const -1
	})
	t.Run("random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 2000 {
			segs := make([]dataSegment, rng.IntN(8))
			off := uint32(rng.IntN(64))
			for i := range segs {
				if rng.IntN(4) == 0 {
					off = uint32(rng.IntN(size)) // anywhere, even back
				}
				init := make([]byte, rng.IntN(40))
				for j := range init {
					init[j] = byte(1 + rng.IntN(255))
				}
				segs[i] = dataSegment{off, init}
				off += uint32(len(init) + rng.IntN(2*maxDataGap))
			}
			check(t, segs)
		}
	})
	t.Run("left alone", func(t *testing.T) {
		orig := dataSection([]dataSegment{seg(0, "ab"), seg(4, "cd")})
		if got, _ := mergeData(orig, true); !bytes.Equal(got, orig) {
			t.Error("rewrote the segments of a module with a data count section")
		}
		passive := append(append(appendU32(nil, 2), orig[1:]...), 0x01, 0x01, 'x')
		passive[0] = 3
		passive = append(appendU32(nil, 3), passive[1:]...)
		if got, err := mergeData(passive, false); err != nil || !bytes.Equal(got, passive) {
			t.Errorf("rewrote a section with a passive segment (err %v)", err)
		}
	})
}

// TestGoGuestDataMerged checks the instrumentation of a real Go guest: its
// tens of thousands of data segments become a few, and the memory an
// instance starts with is unchanged.
func TestGoGuestDataMerged(t *testing.T) {
	wasm, err := os.ReadFile(plugintest.Build(t, "../../testdata/echo"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Module(wasm)
	if err != nil {
		t.Fatal(err)
	}
	data := func(module []byte) []byte {
		sections, err := splitSections(module[8:])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sections {
			if s.id == secData {
				return s.content
			}
		}
		t.Fatal("no data section")
		return nil
	}
	const size = 64 << 20
	want, before, _ := memoryImage(t, data(wasm), size)
	got, after, ok := memoryImage(t, data(out), size)
	if !ok || !bytes.Equal(got, want) {
		t.Fatal("the instrumented module's initial memory differs")
	}
	t.Logf("%d data segments, %d after instrumentation", before, after)
	if before < 1000 || after > 100 {
		t.Errorf("%d data segments, %d after instrumentation: want over 1000 before, at most 100 after", before, after)
	}
}
