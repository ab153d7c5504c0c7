package server

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// TestStreamWrites: a stream costs one write per burst of deltas and no
// more. The headers, the first chunk (role, or response.created and the
// item and part events) and the first delta share a write; the closing
// events ([DONE], or the done events and response.completed) share one with
// the end of the chunked body. Tokens here come 20 ms apart, so every delta
// is its own burst: n deltas make at most n+1 writes (n+6 before, for
// chat: headers, role, finish, usage and [DONE] flushed one by one, then
// the body's end).
func TestStreamWrites(t *testing.T) {
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	cfg.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	h := serveListener(t, cfg, testWriter{t}, func(ln net.Listener) net.Listener {
		return countingListener{ln, &writes}
	})
	for _, tc := range []struct{ name, path, body, delta string }{
		{"chat", "/v1/chat/completions",
			`{"model":"service","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there runedge"}]}`,
			`"content":"`},
		{"responses", "/v1/responses", `{"model":"service","input":"Hello there runedge","stream":true}`,
			"event: response.output_text.delta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.do("GET", "/v1/models", "").Body.Close() // open the connection
			before := writes.Load()
			b := postOK(t, h, tc.path, tc.body)
			if !bytes.Contains(b, []byte("[DONE]")) && !bytes.Contains(b, []byte("response.completed")) {
				t.Fatalf("stream did not end:\n%s", b)
			}
			deltas := strings.Count(string(b), tc.delta)
			if tc.name == "chat" {
				deltas -= strings.Count(string(b), `"content":""`) // the role chunk
			}
			n := writes.Load() - before
			t.Logf("%d deltas, %d writes", deltas, n)
			if deltas < 2 || n > int64(deltas)+1 {
				t.Errorf("%d deltas took %d writes, want at most %d:\n%s", deltas, n, deltas+1, b)
			}
		})
	}
}

type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestBurstOneWrite: a stream whose chunks all reach the edge together
// (bench-edge's upstream writes its 20-chunk stream in one piece) goes to
// the client in one write, though it is longer than net/http's 4 KiB
// connection buffer, which spilled it in two (chat) or three (responses)
// (hold.go).
func TestBurstOneWrite(t *testing.T) {
	var writes atomic.Int64
	h := countingEdge(t, stream20Upstream(t, false), &writes)
	for _, tc := range []struct{ path, body, end string }{
		{"/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hello"}]}`, "data: [DONE]\n\n"},
		{"/v1/responses", `{"model":"service","stream":true,"input":"hello"}`, "event: response.completed\n"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			h.do("GET", "/v1/models", "").Body.Close() // open the connection
			before := writes.Load()
			b := postOK(t, h, tc.path, tc.body)
			n := writes.Load() - before
			if !bytes.Contains(b, []byte(tc.end)) || len(b) <= 4<<10 {
				t.Fatalf("want a whole stream over 4 KiB, got %d bytes:\n%s", len(b), b)
			}
			if n != 1 {
				t.Errorf("%d bytes took %d writes, want 1", len(b), n)
			}
		})
	}
}

// TestHoldConnHalfCloses: the connection wrapper keeps the half-close
// net/http makes before closing a connection whose request body it did
// not read, which keeps the kernel from resetting the connection under
// the reply; what it holds goes out first.
func TestHoldConnHalfCloses(t *testing.T) {
	hc, client, _ := holdPair(t, false)
	var c net.Conn = hc
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatalf("%T has no CloseWrite: net/http would close without its half-close", c)
	}
	hc.Hold()
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(client) // EOF: the half-close
	if err != nil || string(b) != "held" {
		t.Fatalf("read %q, %v; want \"held\" then EOF", b, err)
	}
}
