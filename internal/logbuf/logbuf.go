// Package logbuf is the log sink tests hand to what they start (a server's
// slog handler, a process's stderr): a buffer its goroutines may write while
// the test reads it. Only tests import it.
package logbuf

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent Write and String. The zero
// value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Contains reports whether s has been written.
func (b *Buffer) Contains(s string) bool { return strings.Contains(b.String(), s) }
