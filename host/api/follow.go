package api

import (
	"context"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Readers follow a run, not a host (docs/api.md "Stream resumption"): a
// background response's stream resumed on a host that does not run it
// reads the stored events as the running host persists them (in batches,
// every 200 ms at most) until the run ends, wherever it runs by then; a
// run taken over and driven again on this host is followed in its live
// log. When the run has ended and its stored events do not end with a
// terminal event (the host that streamed them died, and another host drove
// the run again), the reader gets the terminal event built from the
// response as it was recorded: its output is the attempt that finished.

// followPoll is how often a reader of a run on another host looks for
// its next stored events.
const followPoll = 250 * time.Millisecond

// followRun writes run id's stored events after last as they are stored,
// until the run ends, then its terminal event.
func (hs *Handlers) followRun(ctx context.Context, x *filters.Exchange, id string, last int) error {
	h := hs.Runs.History()
	if !x.Reply.Streaming() {
		if err := x.Reply.StartStream(); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		if live := hs.Runs.LiveEvents(id); live != nil {
			// Taken over by this host: its live log from here.
			if err := filters.FollowEvents(ctx, x.Reply, live, last, false); err != nil {
				return err
			}
			// Closed: the run has ended, or is about to be recorded so.
			last = max(last, live.Len()-1)
		}
		run, err := hs.Runs.Get(ctx, runner.Scope{Admin: true}, id)
		if err != nil {
			return err
		}
		if last, err = writeStored(ctx, x, h, id, last, false); err != nil {
			return err
		}
		if run.Status.Terminal() || run.Status == runner.StatusWaiting {
			return hs.endEvent(ctx, x, id, last)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return &filters.ClientGoneError{Err: ctx.Err()}
		}
	}
}

// terminalEvents are the event names that end a Responses stream.
var terminalEvents = map[string]bool{"response.completed": true, "response.incomplete": true,
	"response.failed": true, "error": true}

// endEvent writes, after event last, the terminal event of a run that has
// ended when its stored events lack one.
func (hs *Handlers) endEvent(ctx context.Context, x *filters.Exchange, id string, last int) error {
	h := hs.Runs.History()
	run, err := hs.Runs.Get(ctx, runner.Scope{Admin: true}, id)
	if err != nil || !run.Status.Terminal() {
		return err
	}
	if last >= 0 {
		evs, err := h.Events(ctx, id, last-1, 1)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Seq == last && terminalEvents[ev.Name] {
				return nil
			}
		}
	}
	rec, err := h.GetResponse(ctx, run.TenantID, id)
	if err != nil {
		return err
	}
	obj, err := translate.StoredResponse(ctx, hs.Result, rec, run)
	if err != nil {
		return err
	}
	rs := framing.NewResponseStream(contract.ResponseID(id), contract.MessageID(id))
	name := "response.completed"
	switch gjson.GetBytes(obj, "status").String() {
	case "failed":
		name = "response.failed"
	case "incomplete":
		name = "response.incomplete"
	}
	ev := runner.StoredEvent{Seq: last + 1, Name: name, Data: rs.AppendCompleted(nil, last+1, obj)}
	return filters.WriteEvents(x.Reply, []runner.StoredEvent{ev}, false)
}

// hasEvent reports whether run id has a stored event seq (a cursor a
// reader may resume after).
func hasEvent(ctx context.Context, h runner.HistoryStore, id string, seq int) bool {
	evs, err := h.Events(ctx, id, seq-1, 1)
	return err == nil && len(evs) > 0 && evs[0].Seq == seq
}
