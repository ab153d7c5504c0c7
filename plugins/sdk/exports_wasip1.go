//go:build wasip1

package sdk

import (
	"unsafe"

	"github.com/runedge/runedge/plugins/abi"
)

// abiVersion is the version of the ABI this package implements.
const abiVersion = abi.Version

// minInputBuffer is the smallest input buffer allocated, so that a run of
// small inputs reuses one buffer instead of growing it step by step.
const minInputBuffer = 4 << 10

// The guest's buffers live in package variables so that the Go garbage
// collector sees them as reachable while the host holds their addresses.
var (
	// input is the buffer handed out by runedge_alloc.
	input []byte
	// output is the output of the last hook call, read by runedge_output.
	output []byte
	// version is the copy of Hooks.Version that runedge_version points at.
	version []byte
)

//go:wasmexport runedge_abi_version
func exportABIVersion() int32 { return abiVersion }

//go:wasmexport runedge_hooks
func exportHooks() int32 { return hookBits() }

// exportAlloc returns the address of a buffer of at least size bytes for the
// host to write the next hook's input into. The buffer is reused across calls
// and only grows.
//
//go:wasmexport runedge_alloc
func exportAlloc(size uint32) uint32 {
	if cap(input) == 0 || int(size) > cap(input) {
		input = make([]byte, max(int(size), minInputBuffer))
	}
	input = input[:cap(input)]
	return addr(input)
}

//go:wasmexport runedge_map_request
func exportMapRequest(ptr, size uint32) int32 {
	return runMap(registered.MapRequest, ptr, size)
}

//go:wasmexport runedge_map_result
func exportMapResult(ptr, size uint32) int32 {
	return runMap(registered.MapResult, ptr, size)
}

//go:wasmexport runedge_map_stream
func exportMapStream(ptr, size uint32) int32 {
	return runMap(registered.MapStream, ptr, size)
}

//go:wasmexport runedge_self_test
func exportSelfTest() int32 {
	status, out := callSelfTest(registered.SelfTest)
	output = out
	return status
}

// exportOutput returns the output of the last hook call as (ptr << 32) | len.
//
//go:wasmexport runedge_output
func exportOutput() uint64 {
	if len(output) == 0 {
		return 0
	}
	return uint64(addr(output))<<32 | uint64(len(output))
}

// exportVersion returns Hooks.Version as (ptr << 32) | len, or 0 when it
// is empty.
//
//go:wasmexport runedge_version
func exportVersion() uint64 {
	if registered.Version == "" {
		return 0
	}
	version = []byte(registered.Version)
	return uint64(addr(version))<<32 | uint64(len(version))
}

// runMap checks that ptr and size lie inside the buffer runedge_alloc handed
// out, which is the only place the host may write input to, then runs fn.
func runMap(fn func([]byte) ([]byte, error), ptr, size uint32) int32 {
	output = nil
	base := addr(input)
	if len(input) == 0 || ptr < base || uint64(ptr-base)+uint64(size) > uint64(len(input)) {
		output = []byte("input is outside the buffer returned by runedge_alloc")
		return statusInternal
	}
	off := ptr - base
	status, out := callMap(fn, input[off:off+size:off+size])
	output = out
	return status
}

// addr is the linear-memory address of b's first byte. Linear memory is at
// most 4 GiB, so it fits the ABI's 32-bit pointers.
func addr(b []byte) uint32 {
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
