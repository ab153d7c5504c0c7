package sqlite

import (
	"os"
	"runtime"
	"sync"
)

// A spare P while a checkpoint syncs.
//
// A goroutine in a system call keeps its P (the runtime's right to run Go
// code) until the system call returns or sysmon takes the P away, which
// sysmon does only when it has seen the same system call on two of its
// rounds; a process that rarely blocks has its sysmon polling every 10 ms.
// A checkpoint's fsync took 10–50 ms on a loaded virtual disk under a
// second's WAL (about 20 MB at one connection), so in a process on one P
// (one core, one CPU of a container) nothing else ran meanwhile: the
// request in flight waited that long behind a background goroutine, once
// a second. With a second P the requests run
// on it while the checkpoint's thread sleeps in the kernel.
//
// spareP raises GOMAXPROCS from 1 to 2 while a checkpoint runs and gives
// the runtime its own setting back after it (runtime.SetDefaultGOMAXPROCS:
// the default, updated automatically, as before). A process that runs on
// more than one P, or whose GOMAXPROCS is set in the environment, is left
// as it is. Each change stops the world for some µs.
var spare struct {
	mu     sync.Mutex
	users  int
	raised bool
}

// holdSpareP gives the process a second P, when it runs on one, until
// the returned release is called; holds may overlap (several stores).
func holdSpareP() (release func()) {
	spare.mu.Lock()
	if spare.users == 0 && os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
		spare.raised = true
	}
	spare.users++
	spare.mu.Unlock()
	return releaseSpareP
}

func releaseSpareP() {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.users--; spare.users == 0 && spare.raised {
		spare.raised = false
		runtime.SetDefaultGOMAXPROCS()
	}
}
