package body_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/model"
)

const limit = 64

// exchange is a POST whose body the stage has still to read.
func exchange(b string, headers ...string) *filters.Exchange {
	x, _ := filtertest.Exchange(filters.ChatCompletions, b, headers...)
	x.Body = nil
	return x
}

// wantError checks err is the apierr with status and code, and that the
// chain stopped.
func wantError(t *testing.T, name string, err error, next *filtertest.Next, status int, code string) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code {
		t.Errorf("%s: %v, want %d %s", name, err, status, code)
	}
	if next.Called {
		t.Errorf("%s: next called", name)
	}
}

func TestLimit(t *testing.T) {
	st := body.New(limit, 0)
	at := strings.Repeat("a", limit)

	// At the limit: read in full.
	x, next := exchange(at), &filtertest.Next{}
	if err := st.Handle(t.Context(), x, next); err != nil || !next.Called || string(x.Body) != at {
		t.Fatalf("body at the limit: err %v, next %v, body %q", err, next.Called, x.Body)
	}

	// Declared over the limit: refused before reading anything.
	x, next = exchange(at+"a"), &filtertest.Next{}
	x.Request.Body = io.NopCloser(iotest.ErrReader(errors.New("the body must not be read")))
	wantError(t, "Content-Length over", st.Handle(t.Context(), x, next), next, 413, apierr.CodeBodyTooLarge)

	// Over the limit without a Content-Length (chunked): refused once read
	// past it, and the connection closed, since the rest is unread.
	x, next = exchange(at+"a"), &filtertest.Next{}
	x.Request.ContentLength = -1
	wantError(t, "chunked over", st.Handle(t.Context(), x, next), next, 413, apierr.CodeBodyTooLarge)
	if x.Reply.Header().Get("Connection") != "close" {
		t.Error("chunked over the limit: no Connection: close")
	}
}

func TestContentEncoding(t *testing.T) {
	st := body.New(limit, 0)
	for _, c := range []struct {
		enc  string
		pass bool
	}{{"gzip", false}, {"br", false}, {"deflate", false}, {"identity", true}, {"IDENTITY", true}, {"", true}} {
		x, next := exchange(`{}`, "Content-Encoding", c.enc), &filtertest.Next{}
		if c.enc == "" {
			x.Request.Header.Del("Content-Encoding")
		}
		err := st.Handle(t.Context(), x, next)
		if c.pass {
			if err != nil || !next.Called {
				t.Errorf("%q: %v", c.enc, err)
			}
			continue
		}
		wantError(t, c.enc, err, next, 415, apierr.CodeUnsupportedEncoding)
	}
}

// A GET has no body to read; a body already read is not read again.
func TestNothingToRead(t *testing.T) {
	st := body.New(limit, 0)
	x, next := exchange(strings.Repeat("a", 2*limit)), &filtertest.Next{}
	x.Request.Method = http.MethodGet
	if err := st.Handle(t.Context(), x, next); err != nil || !next.Called || x.Body != nil {
		t.Errorf("GET: err %v, next %v, body %q", err, next.Called, x.Body)
	}
	x, next = exchange("{}"), &filtertest.Next{}
	x.Body = []byte("read before")
	x.Request.Body = io.NopCloser(iotest.ErrReader(errors.New("read twice")))
	if err := st.Handle(t.Context(), x, next); err != nil || string(x.Body) != "read before" {
		t.Errorf("body read twice: err %v, body %q", err, x.Body)
	}
}

// A body that fails half-way is a 400 invalid_body, rendered in the OpenAI
// shape.
func TestReadError(t *testing.T) {
	x, next := exchange(""), &filtertest.Next{}
	x.Request.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"mod`), iotest.ErrReader(errors.New("connection reset"))))
	x.Request.ContentLength = -1
	_, rec := filtertest.Exchange(filters.ChatCompletions, "")
	x.Reply = filters.NewReply(rec, filters.ChatCompletions)
	err := filtertest.Serve(t.Context(), filters.Chain(next, body.New(limit, 0)), x)
	wantError(t, "read error", err, next, 400, apierr.CodeInvalidBody)
	if rec.Code != 400 || strings.Contains(rec.Body.String(), "connection reset") {
		t.Errorf("reply %d %s", rec.Code, rec.Body)
	}
}

// The body and model stages together: what the body holds decides the
// error, rendered in the OpenAI shape with the field named in param where
// there is one.
func TestInvalidJSON(t *testing.T) {
	for _, c := range []struct {
		body  string
		param any // nil: JSON null
	}{
		{`{"model":`, nil},
		{`not json`, nil},
		{`[]`, nil},
		{`{"model":7,"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{`{"model":"service","messages":"hi"}`, "messages"},
		{`{"model":"service","messages":[{}],"stream":"yes"}`, "stream"},
	} {
		x, rec := filtertest.Exchange(filters.ChatCompletions, c.body)
		x.Body = nil
		next := &filtertest.Next{}
		err := filtertest.Serve(t.Context(), filters.Chain(next, body.New(limit, 0), model.New()), x)
		wantError(t, c.body, err, next, 400, apierr.CodeInvalidBody)
		e := gjson.Get(rec.Body.String(), "error")
		if rec.Code != 400 || rec.Header().Get("Content-Type") != "application/json" || e.Get("type").Str != apierr.TypeInvalidRequest {
			t.Errorf("%s: reply %d %s", c.body, rec.Code, rec.Body)
		}
		p := e.Get("param")
		if c.param == nil && p.Type != gjson.Null || c.param != nil && p.Str != c.param {
			t.Errorf("%s: param %s, want %v", c.body, p.Raw, c.param)
		}
	}
}

// A client that trickles its body past the read timeout is cut off with
// 408 request_timeout and the connection closed; this needs a real
// connection, whose read deadline the stage sets.
func TestReadTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	st := body.New(1<<20, timeout)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &filters.Exchange{Endpoint: filters.ChatCompletions, Request: r, Reply: filters.NewReply(w, filters.ChatCompletions)}
		filtertest.Serve(r.Context(), filters.Chain(&filtertest.Next{}, st), x)
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || gjson.GetBytes(b, "error.code").Str != "request_timeout" || !resp.Close {
		t.Errorf("reply %d close=%v %s, want 408 request_timeout and the connection closed", resp.StatusCode, resp.Close, b)
	}
	if d := time.Since(start); d < timeout || d > 10*timeout {
		t.Errorf("cut off after %s, timeout %s", d, timeout)
	}
}
