package translate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/runner"
)

// A stream whose agent is silent for several keepalive intervals before its
// first token starts (headers, the role chunk or response.created) and sends
// ": keepalive" comments; the answer follows them unchanged. Without a
// keepalive interval, the same silence sends none.
func TestKeepaliveOnIdleStream(t *testing.T) {
	const every = 20 * time.Millisecond
	for _, c := range []struct {
		ep    filters.Endpoint
		first string // the frame the stream starts with
	}{{filters.ChatCompletions, ""}, {filters.Responses, "response.created"}} {
		for _, keepalive := range []time.Duration{every, 0} {
			agent := &filtertest.Agent{Gap: 8 * every, Events: filtertest.Deltas("hi"),
				Result: runner.Result{Text: "hi", FinishReason: "stop"}}
			e := newEnv(t, agent, envConfig{keepalive: keepalive})
			_, rec, err := e.do(t, t.Context(), request{ep: c.ep, stream: true})
			if err != nil {
				t.Fatal(err)
			}
			got := names(filtertest.SSE(t, rec.Body.String()))
			comments := 0
			for _, n := range got {
				if n == ": keepalive" {
					comments++
				}
			}
			if keepalive == 0 {
				if comments != 0 {
					t.Errorf("%s without keepalive: %q", c.ep, got)
				}
				continue
			}
			// 8 intervals of silence: a beat after 1 to 1.5 intervals each.
			if comments < 2 || got[0] != c.first || got[1] != ": keepalive" {
				t.Errorf("%s: frames %q, want the stream started, then keepalive comments", c.ep, got)
			}
			rest := slices.DeleteFunc(slices.Clone(got), func(n string) bool { return n == ": keepalive" })
			if last := got[len(got)-1]; last == ": keepalive" || len(rest)+comments != len(got) {
				t.Errorf("%s: frames %q", c.ep, got)
			}
		}
	}
}
