//go:build unix

package socket

import (
	"math"
	"syscall"
)

// descriptorLimit is the process's limit of open descriptors
// (RLIMIT_NOFILE, the soft one that open and accept meet); 0: unknown.
func descriptorLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(min(r.Cur, math.MaxInt32))
}
