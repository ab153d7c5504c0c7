//go:build !linux

package runner

import "sync"

// recordedPool holds the buffers putRecorded gave back, in the Go heap.
var recordedPool sync.Pool // *[]byte

// recordedBuf returns a buffer putRecorded gave back, or nil.
func recordedBuf(int) []byte {
	if p, ok := recordedPool.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return nil
}

// putRecorded gives b back for a later request; nothing may hold b.
func putRecorded(b []byte) {
	if cap(b) < SharedRequestMin || cap(b) > maxPooledRecorded {
		return
	}
	b = b[:0]
	recordedPool.Put(&b)
}
