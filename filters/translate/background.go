package translate

import (
	"context"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/runner"
)

// recordedStream streams a response to its client. Its events are not
// persisted: as with OpenAI, only a background response's stream can be
// resumed (GET /v1/responses/{id}?stream=true), since a foreground run ends
// with its client; and persisting them would cost a 1,000-token stream
// about 2x its CPU per chunk (RATIONALE.md).
func (t *Translate) recordedStream(ctx context.Context, x *filters.Exchange, ids replyIDs) error {
	return t.responseStream(ctx, x, ids, newSink(ctx, x.Reply, nil), nil)
}

// background answers a background response at once and runs the rest in a
// goroutine of its own that outlives the request: it maps the result,
// records the final object and finishes the run (x.End.Finish, after
// x.End.Detach handed it the run's end). The reply is the
// in-progress Response object, or, streaming, the run's events as they are
// logged (their response.created carries the same object, mapped once); a
// client that goes away stops only its own reading.
func (t *Translate) background(ctx context.Context, x *filters.Exchange, ids replyIDs) error {
	created, err := t.mapResult(ctx, x, ids, abi.ResultInProgress, nil)
	if err != nil {
		return err
	}
	release := x.End.Detach()
	bg := context.WithoutCancel(ctx)
	log := x.Run.EventLog() // a background response is always stored
	x = detach(x)
	go func() {
		defer release()
		var err error
		if x.Stream {
			err = t.responseStream(bg, x, ids, newSink(bg, nil, log), created)
		} else {
			_, err = t.complete(bg, x, ids)
		}
		// x.End.Finish records what complete or responseStream did not,
		// and maps the outcome as for a foreground run.
		outcome := x.End.Finish(nil, err)
		if log == nil {
			return
		}
		if outcome != nil && x.Stream {
			// The readers learn how it ended, as a client of a direct
			// stream would.
			e := apierr.From(outcome)
			rs := framing.NewResponseStream(ids.response, ids.message)
			log.Append(bg, "error", rs.AppendError(nil, log.Len(), e.Type, e.Code, e.Message, e.Param))
		}
		log.Close(bg)
	}()
	if !x.Stream {
		if err := x.Reply.JSON(200, created); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		return nil
	}
	return filters.FollowEvents(ctx, x.Reply, log, -1, false)
}

// detach is what a background run's goroutine keeps of its exchange: not
// the request body nor the native request, which the run has recorded and
// handed to its agent, so a run that waits minutes on its provider holds
// no copy of what it was asked (limits.max_background bounds how many
// wait). The request's goroutine keeps x as it is.
func detach(x *filters.Exchange) *filters.Exchange {
	d := *x
	d.Body, d.Native, d.Request = nil, runner.Request{}, nil
	return &d
}
