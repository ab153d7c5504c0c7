package api

import (
	"context"
	"errors"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/runner"
)

// POST /runner/v1/runs: the run stage has started the run from the native
// request (filters/nativereq); this terminal answers it, as translate does
// for the compatible endpoints. Whole, the reply is the run object as
// GET /runner/v1/runs/{id} reads it once the run ended; with stream:true it
// is the run's events as SSE with ids, framed as
// GET /runner/v1/runs/{id}/events frames them:
//
//	run.created              the run object, status running
//	run.output_text.delta    {"delta":"…"}
//	run.tool_call.delta      {"index","id","name","arguments"} (a fragment)
//	run.<status>             the run object as recorded (run.completed)
//
// and, when the run fails after the stream began, an "error" event with
// the OpenAI error body (the edge writes it, Reply.Error).

// errNoRun is a chain built without the run stage before the terminal.
var errNoRun = errors.New("host/server: native run reply without a run (the run stage must come first)")

// Native event names.
const (
	eventRunCreated = "run.created"
	eventTextDelta  = "run.output_text.delta"
	eventToolCall   = "run.tool_call.delta"
)

// StartRun answers a started native run; keepalive is the silence after
// which a stream sends an SSE comment (0: never). Streamed or not, the
// run's events go to its event log (runner.Handle.EventLog), so GET
// /runner/v1/runs/{id}/events follows them live and replays them later.
func (hs *Handlers) StartRun(keepalive time.Duration) filters.Handler {
	return filters.HandlerFunc(func(ctx context.Context, x *filters.Exchange) error {
		if x.Run == nil {
			return errNoRun
		}
		e := &runEvents{ctx: ctx, x: x, log: x.Run.EventLog(), client: x.Stream}
		v, err := hs.streamRun(ctx, e, keepalive)
		if err != nil {
			e.failed(err)
			return err
		}
		e.close()
		if x.Stream {
			return nil
		}
		if err := WriteJSON(x, v); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		return nil
	})
}

// endedRun reads the run back as recorded, with its input and output: the
// object GET /runner/v1/runs/{id} answers.
func (hs *Handlers) endedRun(ctx context.Context, x *filters.Exchange) (RunWithIO, error) {
	id := x.Run.Run().ID
	r, err := hs.Runs.Get(ctx, scope(x), id)
	if err != nil {
		return RunWithIO{}, runError(err, id)
	}
	return RunView(r), nil
}

// streamRun produces the run's events (to e: the client when it asked to
// stream, the log) and returns the run as recorded. A client's stream
// starts with the first delta (or at the end), so a run that fails before
// it produced anything gets a plain JSON error with its real status, as on
// the compatible endpoints.
func (hs *Handlers) streamRun(ctx context.Context, e *runEvents, keepalive time.Duration) (RunWithIO, error) {
	x := e.x
	// The keepalive fires after keepalive of silence: every event pushes it
	// back.
	var tick <-chan time.Time
	quiet := func() {}
	if keepalive > 0 && e.client {
		t := time.NewTimer(keepalive)
		defer t.Stop()
		tick = t.C
		quiet = func() { t.Reset(keepalive) }
	}
	events := x.Run.Events()
	text, calls := false, false
	for events != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Delta == "" && ev.ToolCall == nil {
				continue
			}
			quiet()
			var err error
			if ev.ToolCall != nil {
				calls = true
				err = e.send(eventToolCall, ev.ToolCall)
			} else {
				text = true
				err = e.send(eventTextDelta, delta{ev.Delta})
			}
			if err != nil {
				return RunWithIO{}, err
			}
			if len(events) == 0 {
				if err := e.flush(); err != nil {
					return RunWithIO{}, err
				}
			}
		case <-tick:
			if err := e.start(); err != nil {
				return RunWithIO{}, err
			}
			if err := x.Reply.Comment("keepalive"); err != nil {
				return RunWithIO{}, &filters.ClientGoneError{Err: err}
			}
			quiet()
		}
	}
	res, err := x.Settle()
	if err != nil {
		return RunWithIO{}, err
	}
	// What the agent produced without streaming it: a whole answer, calls.
	if !text && res.Text != "" {
		if err := e.send(eventTextDelta, delta{res.Text}); err != nil {
			return RunWithIO{}, err
		}
	}
	if !calls {
		for i, c := range res.ToolCalls {
			d := runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
			if err := e.send(eventToolCall, d); err != nil {
				return RunWithIO{}, err
			}
		}
	}
	v, err := hs.endedRun(ctx, x)
	if err != nil {
		return RunWithIO{}, err
	}
	if err := e.send("run."+string(v.Status), v); err != nil {
		return RunWithIO{}, err
	}
	if e.client {
		if err := x.Reply.EndStream(); err != nil {
			return RunWithIO{}, &filters.ClientGoneError{Err: err}
		}
	}
	return v, nil
}

// delta is the data of a run.output_text.delta event.
type delta struct {
	Delta string `json:"delta"`
}
