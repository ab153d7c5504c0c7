package logbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once: run with -race.
func TestConcurrentWriteAndRead(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&b, "line %d\n", i)
			_ = b.String()
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 8 || !b.Contains("line 7\n") {
		t.Fatalf("%d lines: %q", n, b.String())
	}
}
