package runtime

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryAllocator keeps instances' linear memories out of the Go heap, in
// memory mapped for each instance: a Go guest's memory is megabytes that
// live as long as the instance, and in the heap the garbage collector's
// goal counted them twice (GOGC=100) while every memory.grow copied the
// whole memory to a larger slice and left the old one as garbage. Here the
// instance reserves its maximum (MaxMemoryPages) as address space only,
// grows by making more of it accessible, in place, and holds in RAM only
// the pages its guest touched. Closing the instance unmaps it; nothing
// keeps a view of guest memory past a call (outputs are copied).
var memoryAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(newMappedMemory)

// mappedMemory is one instance's linear memory: max bytes of address space
// of which the first accessible bytes may be read and written.
type mappedMemory struct {
	buf        []byte // the whole reservation
	accessible int    // bytes readable and writable, a multiple of the page size
}

// newMappedMemory reserves max bytes. wazero cannot take a nil memory, so
// a memory that cannot grow (max 0) gets an empty one, and one the kernel
// will not map falls back to the Go heap, as without this allocator.
func newMappedMemory(capacity, max uint64) experimental.LinearMemory {
	if max == 0 {
		return &mappedMemory{}
	}
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return &heapMemory{buf: make([]byte, 0, capacity), max: max}
	}
	return &mappedMemory{buf: buf}
}

// Reallocate makes the first size bytes accessible and returns them; the
// address never changes. It returns nil, which the guest sees as a failed
// memory.grow, when size is past the reservation or the kernel refuses.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	if n := int(size); n > m.accessible {
		page := syscall.Getpagesize()
		end := min((n+page-1)/page*page, len(m.buf))
		if err := syscall.Mprotect(m.buf[m.accessible:end], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.accessible = end
	}
	return m.buf[:size:size]
}

// Free unmaps the memory. wazero calls it once, when the instance closes.
func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.accessible = nil, 0
	}
}

// heapMemory is a linear memory in the Go heap, grown by copying: what
// wazero does without an allocator.
type heapMemory struct {
	buf []byte
	max uint64
}

func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size)
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }
