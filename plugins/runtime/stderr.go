package runtime

import (
	"bytes"
	"strings"
)

// stderrLimit caps what is kept of a guest's stderr per call.
const stderrLimit = 1 << 10

// stderrHead keeps the start of what a guest writes to stderr during one
// call. A Go guest that dies (out of memory, an unrecovered panic in a
// goroutine) prints the reason there just before exiting, which would
// otherwise be lost; the start holds the reason, the rest is a goroutine dump.
// One instance runs one call at a time, so it needs no lock.
type stderrHead struct {
	buf []byte
}

// Write keeps up to stderrLimit bytes and drops the rest.
func (s *stderrHead) Write(p []byte) (int, error) {
	if room := stderrLimit - len(s.buf); room > 0 {
		s.buf = append(s.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// reset forgets what earlier calls wrote.
func (s *stderrHead) reset() { s.buf = s.buf[:0] }

// firstLine is the first non-empty line written, "" when none.
func (s *stderrHead) firstLine() string {
	for line := range bytes.Lines(s.buf) {
		if l := strings.TrimSpace(string(line)); l != "" {
			return l
		}
	}
	return ""
}
