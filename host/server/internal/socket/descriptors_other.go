//go:build !unix

package socket

// descriptorLimit is unknown where there is no RLIMIT_NOFILE.
func descriptorLimit() int { return 0 }
