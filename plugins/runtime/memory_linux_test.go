package runtime

import (
	"context"
	"testing"
	"unsafe"
)

func TestMappedMemory(t *testing.T) {
	const page = 64 << 10
	m := newMappedMemory(page, 4*page)
	if _, ok := m.(*mappedMemory); !ok {
		t.Fatalf("newMappedMemory = %T, want *mappedMemory", m)
	}
	defer m.Free()
	b := m.Reallocate(page)
	if len(b) != page {
		t.Fatalf("Reallocate(%d): %d bytes", page, len(b))
	}
	b[0], b[page-1] = 1, 2
	grown := m.Reallocate(3 * page)
	if len(grown) != 3*page || unsafe.SliceData(grown) != unsafe.SliceData(b) {
		t.Fatal("grown memory is not the same memory, longer")
	}
	if grown[0] != 1 || grown[page-1] != 2 || grown[3*page-1] != 0 {
		t.Error("growing lost or dirtied bytes")
	}
	grown[3*page-1] = 3 // writable: a fault here would kill the test
	if m.Reallocate(4*page+1) != nil {
		t.Error("Reallocate past the maximum did not fail")
	}
	if got := m.Reallocate(4 * page); len(got) != 4*page {
		t.Errorf("Reallocate to the maximum: %d bytes", len(got))
	}
}

// TestMappedMemoryNoMax checks a memory declared with maximum 0: wazero
// cannot take a nil memory, so the allocator returns one that never grows.
func TestMappedMemoryNoMax(t *testing.T) {
	m := newMappedMemory(0, 0)
	if m == nil {
		t.Fatal("newMappedMemory(0, 0) = nil")
	}
	defer m.Free()
	if b := m.Reallocate(0); len(b) != 0 {
		t.Errorf("Reallocate(0) = %d bytes", len(b))
	}
	if m.Reallocate(1) != nil {
		t.Error("a memory with maximum 0 grew")
	}
}

func TestHeapMemory(t *testing.T) {
	m := &heapMemory{max: 100}
	b := m.Reallocate(10)
	b[9] = 7
	if g := m.Reallocate(50); len(g) != 50 || g[9] != 7 {
		t.Errorf("Reallocate(50) = %d bytes, byte 9 = %d", len(g), g[9])
	}
	if m.Reallocate(101) != nil {
		t.Error("Reallocate past the maximum did not fail")
	}
}

// TestInstanceMemoryGrowsInPlace checks that instances get their memory
// from the allocator: wazero's own, in the Go heap, moves a memory to a
// larger slice when it grows; a mapped one stays where it is.
func TestInstanceMemoryGrowsInPlace(t *testing.T) {
	p := loadRaw(t, newEngine(t), echoGuest(), Options{PoolSize: 1})
	inst := hold(t, p)
	defer p.pool.put(context.Background(), inst)
	before, ok := inst.mem.Read(0, 1)
	if !ok {
		t.Fatal("no memory")
	}
	if _, ok := inst.mem.Grow(16); !ok {
		t.Fatal("memory did not grow")
	}
	after, _ := inst.mem.Read(0, 1)
	if &before[0] != &after[0] {
		t.Error("the memory moved when it grew: it is not the allocator's")
	}
}
