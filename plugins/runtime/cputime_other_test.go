//go:build !unix

package runtime

import "time"

// processCPUTime is not measured on this platform: benchmarks report 0.
func processCPUTime() time.Duration { return 0 }
