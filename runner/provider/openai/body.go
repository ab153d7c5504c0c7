package openai

import (
	"bytes"
	"io"
	"net"
	"sync"
)

// upstreamBody is a request body as it is written: head holds every byte
// that is not a copied literal, and each part's literal goes in before
// head[at:]. A plain body (plainParts) points at the client's texts
// instead of copying them into one 230 KB array for an agent's history
// (RATIONALE.md, "Agent-sized bodies"); the transport reads it in pieces
// (reader), as it read a bytes.Reader, once per attempt.
type upstreamBody struct {
	head  []byte
	parts []bodyPart
	n     int // the whole length
}

type bodyPart struct {
	at  int // where in head the literal goes
	lit string
}

// wholeBody is a body of bytes alone.
func wholeBody(b []byte) *upstreamBody { return &upstreamBody{head: b, n: len(b)} }

// addLiteral appends lit to the body, after the head written so far.
func (b *upstreamBody) addLiteral(lit string) {
	b.parts = append(b.parts, bodyPart{len(b.head), lit})
	b.n += len(lit)
}

// bytes is the body in one array.
func (b *upstreamBody) bytes() []byte {
	if len(b.parts) == 0 {
		return b.head
	}
	out := make([]byte, 0, b.n)
	at := 0
	for _, p := range b.parts {
		out = append(append(out, b.head[at:p.at]...), p.lit...)
		at = p.at
	}
	return append(out, b.head[at:]...)
}

// reader reads the body from its start.
func (b *upstreamBody) reader() io.Reader { return &bodyReader{b: b} }

// writeBufferSize is the transport's buffer for each upstream
// connection's writes.
const writeBufferSize = 4 << 10

// oneWriteBody is the largest body sendReader hands over as one array: it
// leaves 1 KiB of the transport's write buffer for the request's head (a
// few hundred bytes), so head and body leave in one write.
const oneWriteBody = writeBufferSize - 1<<10

// sendReader is the reader the transport sends the body from. net/http
// flushes a request's head on its own before a body it does not know to
// be in memory (a *bytes.Reader, *bytes.Buffer or *strings.Reader), in
// case the body blocks: for a bodyReader that is two writes to the
// upstream, and on loopback each write is most of a request's network
// CPU, plus a second wakeup of the upstream to read the body. A small
// body is joined into one array (a copy of at most oneWriteBody bytes)
// and goes with its head in one write; a larger one would take two
// writes either way and keeps its literals where they are
// (RATIONALE.md, "One write per upstream request").
func (b *upstreamBody) sendReader() io.Reader {
	if b.n <= oneWriteBody {
		return bytes.NewReader(b.bytes())
	}
	return b.reader()
}

type bodyReader struct {
	b    *upstreamBody
	head int // the next byte of head
	part int // the next part
	lit  int // the next byte of its literal, once head is at it
}

func (r *bodyReader) Read(p []byte) (n int, err error) {
	b := r.b
	for n < len(p) {
		if r.part < len(b.parts) && r.head == b.parts[r.part].at {
			lit := b.parts[r.part].lit
			c := copy(p[n:], lit[r.lit:])
			n += c
			if r.lit += c; r.lit == len(lit) {
				r.part, r.lit = r.part+1, 0
			}
			continue
		}
		end := len(b.head)
		if r.part < len(b.parts) {
			end = b.parts[r.part].at
		}
		if r.head == end {
			return n, io.EOF
		}
		c := copy(p[n:], b.head[r.head:end])
		n += c
		r.head += c
	}
	return n, nil
}

// copyConn is an upstream connection (plain TCP; under TLS the transport
// writes to a tls.Conn) whose ReadFrom copies a request body through a
// pooled buffer. net/http's transport writes a body of known length as
// io.LimitReader(body) into the connection's ReadFrom, which for a
// net.TCPConn (no file, no socket to splice) is io.Copy through a 32 KiB
// buffer allocated, and zeroed, per body: about a seventh of what an
// agent-sized request allocated besides its body (RATIONALE.md, "Agent-sized
// bodies"). The writes are the same: the buffer's size, one write a fill.
type copyConn struct{ net.Conn }

// copyBufs holds the buffers copyConn copies through, each the size
// io.Copy allocates.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom copies r to the connection through a pooled buffer.
func (c copyConn) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	// writerOnly hides nothing the connection has but ReadFrom, which
	// would call this again.
	n, err := io.CopyBuffer(writerOnly{c.Conn}, r, *bp)
	copyBufs.Put(bp)
	return n, err
}

type writerOnly struct{ io.Writer }
