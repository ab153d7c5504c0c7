package server

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
)

// Tracing and metrics wrap the run store and the response history; the
// wrappers must keep what the runner looks for on them (the joined history
// write), so that turning tracing on does not change how many commits a
// stored response takes: two (start and end, each with its history), with
// and without streaming.
func TestStoredResponseCommitsSameWithTracing(t *testing.T) {
	commits := func(t *testing.T, tracing bool) [2]int64 {
		var o *otlpReceiver
		if tracing {
			o = newOTLPReceiver(t)
		}
		h := start(t, func(c *config.Config) {
			c.Provider.Offline.TokenDelay = config.Dur(time.Millisecond)
			if o != nil {
				o.config(c)
			}
		})
		cs, ok := h.srv.store.(interface{ CommitStats() (int64, int64) })
		if !ok {
			t.Fatalf("%T reports no commits", h.srv.store)
		}
		var out [2]int64
		for i, req := range []string{`{"model":"service","input":"hello"}`, `{"model":"service","stream":true,"input":"hello"}`} {
			b0, _ := cs.CommitStats()
			res := h.do("POST", "/v1/responses", req)
			b := body(t, res)
			if res.StatusCode != 200 || !strings.Contains(string(b), "hello") {
				t.Fatalf("%d %s", res.StatusCode, b)
			}
			b1, _ := cs.CommitStats()
			out[i] = b1 - b0
		}
		return out
	}
	off, on := commits(t, false), commits(t, true)
	if off != on || off != [2]int64{2, 2} {
		t.Fatalf("commits of a stored response (plain, streamed): tracing off %v, on %v; want [2 2] both", off, on)
	}
}
