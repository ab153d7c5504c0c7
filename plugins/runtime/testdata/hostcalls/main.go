// Command hostcalls is a test plugin whose map_request loops forever over
// the WASI function its input names, with the largest arguments that fit:
// the host must end the call at its time budget all the same.
package main

import (
	"errors"
	"unsafe"

	"github.com/runedge/runedge/plugins/sdk"
)

//go:wasmimport wasi_snapshot_preview1 random_get
func randomGet(buf unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd uint32, iovs unsafe.Pointer, n uint32, written unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdRead(fd uint32, iovs unsafe.Pointer, n uint32, read unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 clock_time_get
func clockTimeGet(id uint32, precision uint64, t unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 clock_res_get
func clockResGet(id uint32, t unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out unsafe.Pointer, n uint32, nevents unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sched_yield
func schedYield() uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGet(fd uint32, stat unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
func argsSizesGet(argc, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(n, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd uint32, out unsafe.Pointer) uint32

// calls maps each name the host test sends to one call of that function.
var calls = map[string]func(){}

const big = 16 << 20

var (
	buf     = make([]byte, big)
	one     [64]byte
	iovs    []uint32 // (pointer, length) pairs
	results [2]uint64
	subs    = make([]byte, 48*1024)
	events  = make([]byte, 32*1024)
)

func init() {
	p := unsafe.Pointer(&buf[0])
	addr := uint32(uintptr(p))
	// A million one-byte iovecs, then one of 16 MiB.
	for range 1 << 20 {
		iovs = append(iovs, addr, 1)
	}
	iovs = append(iovs, addr, big)
	many := unsafe.Pointer(&iovs[0])
	n := uint32(len(iovs) / 2)
	r := unsafe.Pointer(&results[0])
	// poll_oneoff: 1024 clock subscriptions of one second each (type 0 =
	// clock, relative timeout at offset 24).
	for i := range 1024 {
		s := subs[i*48:]
		*(*uint64)(unsafe.Pointer(&s[24])) = 1e9
	}
	calls["random_get"] = func() { randomGet(p, big) }
	calls["fd_write_stdout"] = func() { fdWrite(1, many, n, r) }
	calls["fd_write_stderr"] = func() { fdWrite(2, many, n, r) }
	calls["fd_read"] = func() { fdRead(0, many, n, r) }
	calls["clock_time_get"] = func() { clockTimeGet(1, 0, r) }
	calls["clock_res_get"] = func() { clockResGet(0, r) }
	calls["poll_oneoff"] = func() { pollOneoff(unsafe.Pointer(&subs[0]), unsafe.Pointer(&events[0]), 1024, r) }
	calls["sched_yield"] = func() { schedYield() }
	calls["fd_fdstat_get"] = func() { fdFdstatGet(1, unsafe.Pointer(&one[0])) }
	calls["args_sizes_get"] = func() { argsSizesGet(r, unsafe.Pointer(&results[1])) }
	calls["environ_sizes_get"] = func() { environSizesGet(r, unsafe.Pointer(&results[1])) }
	calls["fd_prestat_get"] = func() { fdPrestatGet(3, unsafe.Pointer(&one[0])) }

	sdk.Register(sdk.Hooks{
		MapRequest: func(in []byte) ([]byte, error) {
			call, ok := calls[string(in)]
			if !ok {
				return nil, errors.New("unknown host function")
			}
			for {
				call()
			}
		},
		MapResult: func(in []byte) ([]byte, error) { return in, nil },
	})
}

func main() {}
