// Package body is the stage that reads the request body. It comes right
// after auth, so that nobody without a valid token can make runedge read
// (and hold in memory) a body: the token is checked on the headers alone.
package body

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Body is the body stage.
type Body struct {
	limit   int64
	timeout time.Duration
	get     bool // read the body of GET and HEAD requests too
	gate    *Gate
}

var _ filters.Stage = (*Body)(nil)

// New reads bodies of at most limit bytes, in full within timeout (0: no
// deadline), which cuts off a client that trickles its body.
func New(limit int64, timeout time.Duration) *Body { return &Body{limit: limit, timeout: timeout} }

// WithGET returns a stage that reads a GET's body too (within the same
// limit and deadline): an endpoint that honours a GET body (openai-go sends
// {"stream":true} on GET /v1/responses/{id}) must not read it with no
// deadline.
func (b *Body) WithGET() *Body {
	c := *b
	c.get = true
	return &c
}

// Admitting returns a stage whose bodies are admitted by g (nil: no
// bound): a body's bytes are taken before it is read when its length is
// declared (after, when it is not) and given back once the run's request
// has gone upstream (runner.Sent), or when the rest of the chain returns.
func (b *Body) Admitting(g *Gate) *Body {
	c := *b
	c.gate = g
	return &c
}

// Name implements filters.Stage.
func (*Body) Name() string { return contract.StageBody }

// Handle implements filters.Stage. Requests without a body (GET) pass.
func (b *Body) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	if x.Body == nil && (b.get || x.Request.Method != http.MethodGet && x.Request.Method != http.MethodHead) {
		body, held, err := b.admitRead(ctx, x)
		if err != nil {
			return err
		}
		if held != nil {
			// Given back once the run's request has gone upstream
			// (runner.Sent), or when the chain returns if it never does.
			defer held.release()
			ctx = runner.WithSent(ctx, held.release)
		}
		x.Body = body
	}
	return next.Handle(ctx, x)
}

// admitRead reads the body under the gate. A body of declared length is
// admitted before it is read, so a request that waits holds no copy of it;
// a read that outlasts readHold gives its bytes back (a client that
// trickles its body must not keep others waiting) and takes them again once
// the body is in. A body of unknown length is admitted once read.
func (b *Body) admitRead(ctx context.Context, x *filters.Exchange) ([]byte, *held, error) {
	n := x.Request.ContentLength
	if b.gate == nil || n > b.limit {
		body, err := b.read(x)
		return body, nil, err
	}
	var h *held
	if n > 0 {
		var err error
		if h, err = b.gate.take(ctx, n); err != nil {
			return nil, nil, err
		}
		b.gate.startRead(h, readHold)
	}
	body, err := b.read(x)
	if h != nil && !b.gate.endRead(h) {
		h = nil // given back while the body was read
	}
	if err != nil {
		if h != nil {
			h.release()
		}
		return nil, nil, err
	}
	if h == nil && len(body) > 0 {
		if h, err = b.gate.take(ctx, int64(len(body))); err != nil {
			return nil, nil, err
		}
	}
	return body, h, nil
}

// readHold is how long a body's read may hold the bytes it was admitted
// with: a 230 KB body arrives in well under a millisecond from a local
// client and in about 20 ms at 100 Mbit/s.
const readHold = 250 * time.Millisecond

func (b *Body) read(x *filters.Exchange) ([]byte, error) {
	r := x.Request
	// A compressed body would only fail later as "not valid JSON", which
	// sends its sender looking in the wrong place. Bodies are read as
	// sent; none of the OpenAI SDKs compresses a request.
	if ce := firstValue(r.Header, "Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, apierr.New(apierr.CodeUnsupportedEncoding, "a compressed request body (Content-Encoding) is not supported; send the body uncompressed")
	}
	if r.ContentLength > b.limit {
		return nil, tooLarge(b.limit)
	}
	if b.timeout > 0 {
		x.Reply.SetReadDeadline(time.Now().Add(b.timeout))
		// Cleared after: the server reads on in the background to notice
		// a client that goes away, and must not take the deadline for that.
		defer x.Reply.SetReadDeadline(time.Time{})
	}
	body, err := readAll(io.LimitReader(r.Body, b.limit+1), r.ContentLength)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		x.Reply.Header().Set("Connection", "close")
		return nil, apierr.New(apierr.CodeRequestTimeout, "the request body was not received within "+b.timeout.String())
	case err != nil:
		return nil, apierr.InvalidBody("", "reading the request body failed")
	case int64(len(body)) > b.limit:
		x.Reply.Header().Set("Connection", "close")
		return nil, tooLarge(b.limit)
	}
	return body, nil
}

// firstValue is h.Get(name) for a name in canonical form, as net/http
// files parsed headers: the map read without canonicalizing name again
// (filters.HeaderValue).
func firstValue(h http.Header, name string) string {
	if vs := h[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// presize is the most readAll allocates ahead on a declared length: a
// client that declares a large body and sends it slowly holds no more
// until it sends more.
const presize = 1 << 20

// readAll is io.ReadAll into a buffer sized from the declared length n
// (-1: unknown), so a body of known length is read into one allocation
// rather than grown and copied some twenty times (a 230 KB body cost
// twice its size in copies and cleared memory).
func readAll(r io.Reader, n int64) ([]byte, error) {
	size := 512
	if n >= 0 {
		size = int(min(n, presize)) + 1 // the +1 takes the EOF without growing
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

func tooLarge(limit int64) error {
	return apierr.New(apierr.CodeBodyTooLarge, "the request body is larger than the limit of "+strconv.FormatInt(limit, 10)+" bytes")
}
