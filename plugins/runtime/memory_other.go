//go:build !linux

package runtime

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is nil off Linux: wazero keeps linear memories in the Go
// heap (see memory_linux.go).
var memoryAllocator experimental.MemoryAllocator
