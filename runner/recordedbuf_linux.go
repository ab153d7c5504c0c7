package runner

import (
	"sync"
	"syscall"
	"unsafe"
)

// recordedBufs are the buffers of recorded requests, mapped outside the Go
// heap. In the heap (a sync.Pool) every buffer in use or pooled was live
// at each collection, and the collector's goal (GOGC=100) counted it twice:
// an agent-sized host at 32 connections held nine of 240 KB, one per run
// waiting for its start to commit, about 4 MB of goal. Mapped, a buffer
// costs its touched pages once; at most recordedIdle wait for a later
// request, the rest are unmapped when given back. Nothing of the Go heap
// points into one: a request's bytes are copied by the store's write.
var recordedBufs struct {
	mu     sync.Mutex
	idle   [][]byte
	mapped map[*byte]bool // every buffer mapped and not unmapped, by its first byte
}

// recordedIdle is how many given-back buffers stay mapped for later
// requests: more than one group commit gives back at once (the nine runs
// of a batch), since a buffer unmapped and mapped again pays its page
// faults and the unmapping's TLB flush; with four kept, bench-edge's agent
// scenario cost 2857-3176 us of CPU a request against 1487-1911 for heap
// buffers. recordedUnit is what a buffer's size is rounded up to.
const (
	recordedIdle = 16
	recordedUnit = 64 << 10
)

// recordedBuf returns an empty buffer of n bytes' room at least, or nil
// (n past maxPooledRecorded, or the kernel refused a mapping).
func recordedBuf(n int) []byte {
	if n > maxPooledRecorded {
		return nil
	}
	r := &recordedBufs
	r.mu.Lock()
	for i := len(r.idle) - 1; i >= 0; i-- {
		if b := r.idle[i]; cap(b) >= n {
			last := len(r.idle) - 1
			r.idle[i] = r.idle[last]
			r.idle[last] = nil
			r.idle = r.idle[:last]
			r.mu.Unlock()
			return b
		}
	}
	r.mu.Unlock()
	size := (n + recordedUnit - 1) / recordedUnit * recordedUnit
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	r.mu.Lock()
	if r.mapped == nil {
		r.mapped = make(map[*byte]bool)
	}
	r.mapped[&b[0]] = true
	r.mu.Unlock()
	return b[:0]
}

// putRecorded gives b back for a later request; nothing may hold b. A
// buffer recordedBuf did not return (one in the Go heap) is left to the
// collector.
func putRecorded(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:0:cap(b)]
	p := unsafe.SliceData(b)
	r := &recordedBufs
	r.mu.Lock()
	if !r.mapped[p] {
		r.mu.Unlock()
		return
	}
	if len(r.idle) < recordedIdle {
		r.idle = append(r.idle, b)
		r.mu.Unlock()
		return
	}
	delete(r.mapped, p)
	r.mu.Unlock()
	_ = syscall.Munmap(b[:cap(b)])
}
