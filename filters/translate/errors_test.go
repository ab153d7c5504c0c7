package translate_test

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/runner"
)

// A run that fails before its first token gets a plain JSON error with its
// real status (the stream starts lazily); one that fails mid-stream ends
// its stream with an error frame (chat: the error body; responses: an
// error event continuing the sequence). Either way the run is recorded
// failed with the provider's reason.
func TestStreamFailure(t *testing.T) {
	t.Parallel()
	fail := fmt.Errorf("upstream said 500: %w", runner.ErrProvider)
	e := newEnv(t, &filtertest.Agent{}, envConfig{})
	for _, c := range []struct {
		ep     filters.Endpoint
		events []runner.Event
		frames []string // nil: a JSON reply
	}{
		{ep: filters.ChatCompletions},
		{ep: filters.Responses},
		{ep: filters.ChatCompletions, events: filtertest.Deltas("a"), frames: []string{"", "", ""}},
		{ep: filters.Responses, events: filtertest.Deltas("a"), frames: []string{"response.created",
			"response.output_item.added", "response.content_part.added", "response.output_text.delta", "error"}},
	} {
		e.runs.SetAgent(&filtertest.Agent{Events: c.events, Err: fail})
		_, rec, err := e.do(t, t.Context(), request{ep: c.ep, stream: true})
		if err == nil {
			t.Fatalf("%s: no error", c.ep)
		}
		id := runID(t, rec)
		if c.frames == nil {
			if rec.Code != 502 || rec.Header().Get("Content-Type") != "application/json" ||
				gjson.Get(rec.Body.String(), "error.code").Str != "provider_error" {
				t.Errorf("%s: %d %s, want a 502 provider_error JSON body", c.ep, rec.Code, rec.Body)
			}
		} else {
			evs := filtertest.SSE(t, rec.Body.String())
			if got := names(evs); !slices.Equal(got, c.frames) {
				t.Fatalf("%s: frames %q, want %q", c.ep, got, c.frames)
			}
			last := gjson.Parse(evs[len(evs)-1].Data)
			code := last.Get("error.code").Str
			if c.ep == filters.Responses {
				code = last.Get("code").Str
				if n := last.Get("sequence_number").Int(); n != int64(len(evs)-1) {
					t.Errorf("error event sequence_number %d, want %d", n, len(evs)-1)
				}
			}
			if code != "provider_error" {
				t.Errorf("%s: last frame %s", c.ep, evs[len(evs)-1].Data)
			}
		}
		e.wantEnded(t, id, runner.StatusFailed, runner.ReasonProviderError)
	}
}

// goneWriter is a client that leaves after its first n writes.
type goneWriter struct {
	*httptest.ResponseRecorder
	n int
}

func (w *goneWriter) Write(b []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errors.New("write: broken pipe")
	}
	return w.ResponseRecorder.Write(b)
}

// A client that goes away mid-stream ends its run, recorded cancelled with
// reason client_disconnect, and nothing is rendered to it.
func TestClientGoneMidStream(t *testing.T) {
	t.Parallel()
	agent := &filtertest.Agent{Gap: 5 * time.Millisecond, Events: filtertest.Deltas("a", "b", "c", "d", "e", "f")}
	e := newEnv(t, agent, envConfig{})
	for _, ep := range []filters.Endpoint{filters.ChatCompletions, filters.Responses} {
		x, _ := filtertest.Exchange(ep, `{}`)
		w := &goneWriter{ResponseRecorder: httptest.NewRecorder(), n: 2}
		x.Reply = filters.NewReply(w, ep)
		x.Stream = true
		x.Native = runner.Request{Input: []runner.Message{{Role: "user", Content: "hi"}}, Stream: true}
		err := filtertest.Serve(t.Context(), e.chain, x)
		var gone *filters.ClientGoneError
		if !errors.As(err, &gone) {
			t.Fatalf("%s: err %v, want the client gone", ep, err)
		}
		e.wantEnded(t, w.Header().Get(filters.HeaderRunID), runner.StatusCancelled, runner.ReasonClientDisconnect)
	}
}
