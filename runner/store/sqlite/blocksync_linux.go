//go:build linux

package sqlite

import (
	"syscall"
	_ "unsafe" // go:linkname
)

// An fsync that gives up its P at once (walvfs.go's syncs).
//
// modernc's fsync is syscall.Syscall's: the goroutine keeps its P (the
// right to run Go code) while the kernel syncs, until the runtime's
// monitor (sysmon) finds the same call on two of its rounds and hands the
// P to another thread. A process that seldom blocks has its monitor on
// 10 ms rounds, and a host at one connection has one P: every goroutine,
// the request's included, waited behind the checkpointer's fsync for
// 10–20 ms (RATIONALE.md "The tail at one connection: what the slow
// requests wait on"). blockingSyscall is syscall.Syscall with the
// runtime's entersyscallblock in place of entersyscall: the P is handed
// off before the call, as the runtime does for its own calls known to
// block. Both are kept for outside callers (go.dev/issue/67401).

//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// blockingSyscall is syscall.Syscall for a call that blocks: its P goes to
// another thread before the call, not when the monitor notices it. Like
// syscall.Syscall it must not grow its stack between the two runtime calls.
//
//go:nosplit
//go:norace
func blockingSyscall(trap, a1, a2, a3 uintptr) (r1 uintptr, err syscall.Errno) {
	entersyscallblock()
	r1, _, err = syscall.RawSyscall6(trap, a1, a2, a3, 0, 0, 0)
	exitsyscall()
	return r1, err
}

// fsyncBlocking is fsync(2) through blockingSyscall, restarted when a
// signal interrupts it.
func fsyncBlocking(fd int32) syscall.Errno {
	for {
		_, err := blockingSyscall(syscall.SYS_FSYNC, uintptr(fd), 0, 0)
		if err != syscall.EINTR {
			return err
		}
	}
}
