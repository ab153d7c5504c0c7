// Command rawabi is a test plugin that implements the ABI by hand, without
// the SDK, so that tests can make a Go guest break the ABI in ways the SDK
// never would. It implements map_request only, and declares no version.
package main

import (
	"strconv"
	"strings"
	"unsafe"
)

func main() {}

// The buffers live in globals so that the guest's garbage collector keeps
// them while the host holds their addresses.
var (
	input  []byte
	output []byte
	// outputAt is what runedge_output returns.
	outputAt uint64
)

//go:wasmexport runedge_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport runedge_hooks
func hooks() int32 { return 1 } // map_request

//go:wasmexport runedge_alloc
func alloc(size uint32) uint32 {
	input = make([]byte, max(size, 1))
	return addr(input)
}

//go:wasmexport runedge_output
func outputExport() uint64 { return outputAt }

// mapRequest runs the command in its input:
//
//	status:N      return status N, with "status N" as the output
//	out-of-range  return an output that lies outside memory
//
// Anything else is echoed.
//
//go:wasmexport runedge_map_request
func mapRequest(ptr, size uint32) int32 {
	in := string(input[:size])
	cmd, arg, _ := strings.Cut(in, ":")
	switch cmd {
	case "status":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return setOutput("bad status: "+err.Error(), 2)
		}
		return setOutput("status "+arg, int32(n))
	case "out-of-range":
		outputAt = 0xffff_0000<<32 | 16
		return 0
	}
	return setOutput(in, 0)
}

// setOutput makes s the output and returns status.
func setOutput(s string, status int32) int32 {
	output = []byte(s)
	outputAt = uint64(addr(output))<<32 | uint64(len(output))
	return status
}

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }
