package openai

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// A whole answer of a known size is read into one buffer of that size,
// whatever the reader's steps; an unknown size, a body longer than it
// said and one past the limit read as io.ReadAll with the limit would.
func TestReadBodyAtItsSize(t *testing.T) {
	body := strings.Repeat(`{"choices":[]}`, 43) // 602 bytes, as bench-edge's answer
	for name, r := range map[string]func() io.Reader{
		"whole":      func() io.Reader { return strings.NewReader(body) },
		"byte-wise":  func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
		"data-eof":   func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) },
		"half-reads": func() io.Reader { return iotest.HalfReader(strings.NewReader(body)) },
	} {
		for _, size := range []int64{int64(len(body)), -1, 10, 0} {
			b, err := readBody(r(), size)
			if err != nil || string(b) != body {
				t.Fatalf("%s, size %d: %q, %v", name, size, b, err)
			}
		}
	}
	sr := strings.NewReader(body)
	if n := testing.AllocsPerRun(100, func() {
		sr.Reset(body)
		readBody(sr, int64(len(body)))
	}); n != 1 {
		t.Errorf("a body of known size: %v allocations, want 1", n)
	}
	_, err := readBody(iotest.ErrReader(io.ErrUnexpectedEOF), 5)
	if err != io.ErrUnexpectedEOF {
		t.Errorf("a read error: %v", err)
	}
	long := bytes.Repeat([]byte("x"), 4096)
	if b, _ := readBody(bytes.NewReader(long), 100); !bytes.Equal(b, long) {
		t.Errorf("a body longer than its size: %d bytes read, want %d", len(b), len(long))
	}
}
