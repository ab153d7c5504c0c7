package body_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/body"
)

// gated is one request through a gated body stage, run in the background:
// read reports the first read of its body, entered the call of the next
// stage, and the next stage returns when leave is closed.
type gated struct {
	read, entered chan struct{}
	leave         chan struct{}
	done          chan error
}

// send runs a request whose body is n bytes (declared unless chunked)
// through st.
func send(t *testing.T, st *body.Body, n int, chunked bool) *gated {
	t.Helper()
	g := &gated{read: make(chan struct{}), entered: make(chan struct{}), leave: make(chan struct{}), done: make(chan error, 1)}
	x := exchange(strings.Repeat("a", n))
	if chunked {
		x.Request.ContentLength = -1
	}
	x.Request.Body = io.NopCloser(&firstRead{r: x.Request.Body, first: g.read})
	next := filters.HandlerFunc(func(context.Context, *filters.Exchange) error {
		close(g.entered)
		<-g.leave
		return nil
	})
	go func() { g.done <- st.Handle(t.Context(), x, next) }()
	t.Cleanup(func() {
		select {
		case <-g.leave:
		default:
			close(g.leave)
		}
	})
	return g
}

// firstRead closes first when its body is first read.
type firstRead struct {
	r     io.Reader
	first chan struct{}
	once  atomic.Bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	if f.once.CompareAndSwap(false, true) {
		close(f.first)
	}
	return f.r.Read(p)
}

func within(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not within 5 s", what)
	}
}

func never(t *testing.T, what string, ch <-chan struct{}, d time.Duration) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s", what)
	case <-time.After(d):
	}
}

// TestGateBoundsBytesInFlight: a request whose body does not fit beside
// those in flight waits before its body is read, and goes on when one
// ends.
func TestGateBoundsBytesInFlight(t *testing.T) {
	gate := body.NewGate(100, 5*time.Second)
	st := body.New(1000, 0).Admitting(gate)
	a := send(t, st, 60, false)
	within(t, "the first request", a.entered)
	if got := gate.InFlight(); got != 60 {
		t.Errorf("in flight %d, want 60", got)
	}
	b := send(t, st, 60, false)
	never(t, "the second body was read while the first held the gate", b.read, 100*time.Millisecond)
	close(a.leave)
	within(t, "the second request after the first", b.entered)
	close(b.leave)
	for _, r := range []*gated{a, b} {
		if err := <-r.done; err != nil {
			t.Fatal(err)
		}
	}
	if got := gate.InFlight(); got != 0 {
		t.Errorf("in flight after both: %d", got)
	}
}

// TestGateRefusesPastTheWait: a request that waits past the wait is a
// retryable 503, its body unread.
func TestGateRefusesPastTheWait(t *testing.T) {
	gate := body.NewGate(100, 50*time.Millisecond)
	st := body.New(1000, 0).Admitting(gate)
	a := send(t, st, 100, false)
	within(t, "the first request", a.entered)
	b := send(t, st, 1, false)
	err := <-b.done
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 503 || e.Code != apierr.CodeUnavailable || e.RetryAfter < 1 {
		t.Fatalf("past the wait: %v, want 503 unavailable with Retry-After", err)
	}
	select {
	case <-b.read:
		t.Error("the refused body was read")
	default:
	}
	close(a.leave)
	<-a.done
	// What it waited for is not taken: a request of the whole bound fits.
	c := send(t, st, 100, false)
	within(t, "a request after the refusal", c.entered)
}

// TestGateFirstComeFirstServed: a small body that would fit does not pass
// a larger one waiting before it.
func TestGateFirstComeFirstServed(t *testing.T) {
	gate := body.NewGate(100, 5*time.Second)
	st := body.New(1000, 0).Admitting(gate)
	a := send(t, st, 60, false)
	within(t, "the first request", a.entered)
	b := send(t, st, 60, false)
	time.Sleep(20 * time.Millisecond) // b queues first
	c := send(t, st, 30, false)
	never(t, "a small body passed the larger one waiting before it", c.entered, 100*time.Millisecond)
	close(a.leave)
	within(t, "the waiting larger body", b.entered)
	within(t, "the small body beside it", c.entered)
}

// TestGateLargeBodyAlone: a body larger than the whole bound is processed
// alone, not refused.
func TestGateLargeBodyAlone(t *testing.T) {
	gate := body.NewGate(100, 5*time.Second)
	st := body.New(1000, 0).Admitting(gate)
	a := send(t, st, 10, false)
	within(t, "the small request", a.entered)
	big := send(t, st, 500, false)
	never(t, "the large body went beside another", big.entered, 50*time.Millisecond)
	close(a.leave)
	within(t, "the large body alone", big.entered)
	c := send(t, st, 1, false)
	never(t, "a body went beside the large one", c.entered, 50*time.Millisecond)
	close(big.leave)
	within(t, "the next after the large body", c.entered)
}

// TestGateTrickledBody: a client that trickles a declared body gives its
// bytes back while it does, so it does not hold others up; a body of
// unknown length is admitted once read.
func TestGateTrickledBody(t *testing.T) {
	gate := body.NewGate(100, 5*time.Second)
	st := body.New(1000, 0).Admitting(gate)
	pr, pw := io.Pipe()
	x := exchange(strings.Repeat("a", 80))
	x.Request.Body = pr
	done := make(chan error, 1)
	go func() {
		done <- st.Handle(t.Context(), x, filters.HandlerFunc(func(context.Context, *filters.Exchange) error { return nil }))
	}()
	go pw.Write([]byte("aaaa")) // and the rest never, until the end
	b := send(t, st, 80, false)
	within(t, "a request beside a trickled body", b.entered)
	pw.CloseWithError(errors.New("gone"))
	if err := <-done; err == nil {
		t.Error("the trickled body's request succeeded")
	}
	close(b.leave)
	<-b.done

	chunked := send(t, st, 30, true)
	within(t, "a chunked body", chunked.entered)
	if got := gate.InFlight(); got != 30 {
		t.Errorf("in flight with a chunked body: %d, want 30", got)
	}
}

// TestGateSet: a lower bound applies to the next request, a higher one
// lets the waiting in.
func TestGateSet(t *testing.T) {
	gate := body.NewGate(100, 5*time.Second)
	st := body.New(1000, 0).Admitting(gate)
	a := send(t, st, 60, false)
	within(t, "the first request", a.entered)
	b := send(t, st, 60, false)
	never(t, "over the bound", b.entered, 50*time.Millisecond)
	gate.Set(200, 5*time.Second)
	within(t, "the waiting request after the bound was raised", b.entered)
}

// BenchmarkGate is the body stage on a 640-byte body (bench-edge's small
// request) without a gate and through one that is never full: what the
// bound costs a request that never meets it (the difference; each op also
// builds the request).
func BenchmarkGate(b *testing.B) {
	payload := strings.Repeat("a", 640)
	next := filters.HandlerFunc(func(context.Context, *filters.Exchange) error { return nil })
	for _, c := range []struct {
		name string
		st   *body.Body
	}{
		{"plain", body.New(1<<20, 0)},
		{"gated", body.New(1<<20, 0).Admitting(body.NewGate(2<<20, time.Second))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x := exchange(payload) // in both, so it cancels out
				if err := c.st.Handle(b.Context(), x, next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
