package filters

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEndStreamChunked: a stream whose events were all buffered is still
// sent chunked (EndStream flushes it), and one already flushed gets its
// last events with the end of the body; both arrive whole.
func TestEndStreamChunked(t *testing.T) {
	long := strings.Repeat("x", chunkedAfter-8) // with its frame, one byte more than chunkedAfter
	for _, tc := range []struct {
		flushFirst bool
		first      string
	}{{false, `{"a":1}`}, {true, `{"a":1}`}, {false, long}} {
		flushFirst := tc.flushFirst
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rp := NewReply(w, ChatCompletions)
			rp.OpenStream()
			rp.Buffer("", []byte(tc.first))
			if flushFirst {
				rp.Flush()
			}
			rp.Buffer("", []byte("[DONE]"))
			if err := rp.EndStream(); err != nil {
				t.Error(err)
			}
		}))
		res, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if want := "data: " + tc.first + "\n\ndata: [DONE]\n\n"; string(b) != want {
			t.Errorf("flushFirst=%v: body %q, want %q", flushFirst, b, want)
		}
		if len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" || res.ContentLength != -1 {
			t.Errorf("flushFirst=%v: not chunked: %v, Content-Length %d", flushFirst, res.TransferEncoding, res.ContentLength)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}
