package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner"
)

// TestUpstreamBodyCopiedThroughAPooledBuffer: the provider's transport
// writes an agent-sized body (as net/http does: a LimitedReader over the
// body into the connection's ReadFrom) to a real socket on 127.0.0.1
// without a 32 KiB buffer of its own per body, and the peer reads the
// body's bytes. Over a bare net.TCPConn, whose ReadFrom is io.Copy
// through a buffer it allocates, each body allocates 32 KiB.
func TestUpstreamBodyCopiedThroughAPooledBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The peer compares what it reads with the bodies in place, in a
	// buffer of its own, so that it allocates nothing per body either.
	var want []byte
	ready := make(chan struct{})
	read := make(chan error, 1)
	total := 0
	go func() {
		c, err := ln.Accept()
		if err != nil {
			read <- err
			return
		}
		defer c.Close()
		<-ready
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			for _, b := range buf[:n] {
				if b != want[total%len(want)] {
					read <- fmt.Errorf("byte %d of the bodies differs", total)
					return
				}
				total++
			}
			if err == io.EOF {
				read <- nil
				return
			}
			if err != nil {
				read <- err
				return
			}
		}
	}()
	p, err := New(Config{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "up-model"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.client.Transport.(*http.Transport).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rf, ok := c.(io.ReaderFrom)
	if !ok {
		t.Fatalf("%T is no io.ReaderFrom", c)
	}

	req := agentRequest()
	body, err := p.upstreamBody(req)
	if err != nil {
		t.Fatal(err)
	}
	want = body.bytes()
	close(ready)
	const bodies = 20
	write := func() {
		n, err := rf.ReadFrom(io.LimitReader(body.reader(), int64(body.n)))
		if err != nil || n != int64(body.n) {
			t.Fatalf("wrote %d of %d bytes: %v", n, body.n, err)
		}
	}
	write() // the pool's first buffer
	// The count is the process's: whatever else runs meanwhile (another
	// test's goroutines winding down, a collection emptying the pool
	// once) is in it too, so the least of three batches is taken. A
	// buffer per body is 32 KiB in every batch.
	const batches = 3
	least := uint64(math.MaxUint64)
	for range batches {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range bodies {
			write()
		}
		runtime.ReadMemStats(&m1)
		least = min(least, (m1.TotalAlloc-m0.TotalAlloc)/bodies)
	}
	c.Close()
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	if least > 16<<10 {
		t.Errorf("%d bytes allocated per body written", least)
	}
	if n := len(want) * (batches*bodies + 1); total != n {
		t.Errorf("the peer read %d bytes, not the %d of %d bodies", total, n, batches*bodies+1)
	}
}

// TestPlainHeadSizedToFit: the head of an agent's upstream body (every
// byte but the copied literals) is allocated once and at about its size,
// not grown and not a third larger than it needs.
func TestPlainHeadSizedToFit(t *testing.T) {
	req := agentRequest()
	p := &Provider{cfg: Config{Model: "up-model"}}
	if allocs := testing.AllocsPerRun(10, func() { p.plainParts(req) }); allocs != 3 {
		t.Errorf("%v allocations, want 3 (the body, its parts, its head)", allocs)
	}
	body, ok := p.plainParts(req)
	if !ok {
		t.Fatal("no plain body")
	}
	if spare := cap(body.head) - len(body.head); spare > 128 {
		t.Errorf("head of %d bytes in %d", len(body.head), cap(body.head))
	}
}

// agentRequest is the bench's agent history (mockupstream.AgentChat) as
// the runner hands it to the provider: each text with its literal, as the
// decoded path records it.
func agentRequest() runner.ProviderRequest {
	var req runner.ProviderRequest
	gjson.GetBytes(mockupstream.AgentChat("service", false), "messages").ForEach(func(_, m gjson.Result) bool {
		msg := runner.Message{Role: m.Get("role").Str}
		lit, _ := jsonfast.StringLiteral(jsonfast.Value(m.Get("content").Raw), &msg.Content)
		msg.SetContentJSON(lit)
		req.Messages = append(req.Messages, msg)
		return true
	})
	return req
}

// writeCounter counts the writes to a connection.
type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestSmallRequestInOneWrite: a small request (a chat's texts, held as
// literals like an agent's) reaches the upstream, a real server on
// 127.0.0.1, in one write of its head and body together, where net/http
// would flush the head on its own before a body it does not know to be in
// memory; the upstream reads the body whole. An agent-sized body still
// arrives whole.
func TestSmallRequestInOneWrite(t *testing.T) {
	up := newRecordingUpstream(t)
	p, err := New(Config{BaseURL: up.srv.URL + "/v1", Model: "up-model"})
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	tr := p.client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := c.(copyConn)
		cc.Conn = writeCounter{cc.Conn, &writes}
		return cc, nil
	}

	small := agentRequest()
	small.Messages = small.Messages[:2]
	small.Attempt = 1
	for _, tc := range []struct {
		name string
		req  runner.ProviderRequest
	}{{"small", small}, {"agent-sized", agentRequest()}} {
		body, err := p.upstreamBody(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if len(body.parts) == 0 {
			t.Fatalf("%s: a body without literals tests nothing", tc.name)
		}
		before := writes.Load()
		if _, err := p.Generate(t.Context(), tc.req, func(runner.Event) error { return nil }); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n := writes.Load() - before
		if want, last := string(body.bytes()), up.last(); last != want {
			t.Errorf("%s: the upstream read %d bytes, not the %d sent", tc.name, len(last), len(want))
		}
		if tc.name == "small" && n != 1 {
			t.Errorf("small request of %d bytes: %d writes, want 1", body.n, n)
		}
		t.Logf("%s: %d bytes in %d writes", tc.name, body.n, n)
	}
}

// TestBodySentAgainOnRedirect: an upstream that answers 307 gets the body
// again from GetBody, whole, for a small body (sent as one array) and an
// agent-sized one (sent from its literals).
func TestBodySentAgainOnRedirect(t *testing.T) {
	final := newRecordingUpstream(t)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, final.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	p, err := New(Config{BaseURL: first.URL + "/v1", Model: "up-model"})
	if err != nil {
		t.Fatal(err)
	}
	small := agentRequest()
	small.Messages = small.Messages[:2]
	for _, req := range []runner.ProviderRequest{small, agentRequest()} {
		req.Attempt = 1
		body, err := p.upstreamBody(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Generate(t.Context(), req, func(runner.Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if want, last := string(body.bytes()), final.last(); last != want {
			t.Errorf("body of %d bytes: the redirected upstream read %d bytes, not the same", len(want), len(last))
		}
	}
	if n := final.calls(); n != 2 {
		t.Errorf("the final upstream was called %d times, want 2", n)
	}
}

// recordingUpstream is the bench's mock upstream on 127.0.0.1, keeping
// the bodies it read.
type recordingUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	u := &recordingUpstream{}
	mock := mockupstream.Handler()
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		u.mu.Lock()
		u.got = append(u.got, string(b))
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// last is the last body read ("" before any).
func (u *recordingUpstream) last() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.got) == 0 {
		return ""
	}
	return u.got[len(u.got)-1]
}

func (u *recordingUpstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.got)
}
