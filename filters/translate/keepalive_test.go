package translate_test

import (
	"fmt"
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
	t.Parallel()
	const every = 20 * time.Millisecond
	for _, c := range []struct {
		ep    filters.Endpoint
		first string   // the frame the stream starts with
		rest  []string // the frames after the comments
	}{
		{filters.ChatCompletions, "", []string{"", "", ""}}, // delta, finish, [DONE]
		{filters.Responses, "response.created", []string{"response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done",
			"response.output_item.done", "response.completed"}},
	} {
		for _, keepalive := range []time.Duration{every, 0} {
			t.Run(fmt.Sprintf("%s/%s", c.ep, keepalive), func(t *testing.T) {
				t.Parallel()
				agent := &filtertest.Agent{Gap: 10 * every, Events: filtertest.Deltas("hi"),
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
					return
				}
				// 10 intervals of silence: a beat after 1 to 1.5 intervals each.
				if comments < 2 || got[0] != c.first || got[1] != ": keepalive" {
					t.Errorf("%s: frames %q, want the stream started, then keepalive comments", c.ep, got)
				}
				if rest := got[1+comments:]; !slices.Equal(rest, c.rest) {
					t.Errorf("%s: frames %q, want the answer whole after the comments", c.ep, got)
				}
			})
		}
	}
}
