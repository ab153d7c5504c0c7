package api

import (
	"context"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Redrive is the runner's LeaseConfig.Redrive for a host: a background
// Responses run taken over from another host (or this host's previous
// process) streams its new attempt into the run's event log as the
// translate stage streams a background run's, so that a reader following
// the run on any host sees the new attempt (docs/api.md "Stream
// resumption"). The log already holds the events the earlier attempts
// stored; the new attempt's follow them:
//
//   - response.output_item.added and response.content_part.added of the
//     message (output 0, its id unchanged), once text arrives;
//   - its response.output_text.delta events, unless the generation's
//     Responses plugin maps streamed text (map_stream): then the text is
//     not streamed raw and comes with the done events only;
//   - response.output_text.done, response.content_part.done and
//     response.output_item.done with the whole text as the plugin mapped it;
//   - the terminal event (response.completed, response.failed or
//     response.incomplete) with the Response as recorded, built as GET
//     /v1/responses/{id} builds it: the attempt that finished.
//
// Tool calls and reasoning come in the terminal event's Response only.
// result gives the current generation's Responses result mapping plugin
// (nil while none is built yet: then the terminal event is left to the
// readers, which build the same one from the record). Any other run taken
// over (a native run) is driven as the runner drives it without a hook.
func Redrive(store runner.Store, history runner.HistoryStore, result func() filters.Mapper) func(context.Context, *runner.Handle) {
	return func(ctx context.Context, h *runner.Handle) {
		log := h.EventLog()
		run := h.Run()
		if log == nil || history == nil || run.Endpoint != contract.EndpointResponses {
			for range h.Events() {
			}
			res, err := h.Wait()
			h.Finish(&res, err)
			if log != nil {
				log.Close(ctx)
			}
			return
		}
		defer log.Close(ctx)
		p := result()
		raw := p == nil || !p.Has(runtime.MapStream)
		rs := framing.NewResponseStream(contract.ResponseID(run.ID), contract.MessageID(run.ID))
		var buf []byte
		open := false
		openMessage := func() {
			open = true
			log.Append(ctx, "response.output_item.added", rs.AppendItemAdded(buf[:0], log.Len()))
			log.Append(ctx, "response.content_part.added", rs.AppendPartAdded(buf[:0], log.Len()))
		}
		for ev := range h.Events() {
			if ev.Delta == "" || !raw {
				continue
			}
			if !open {
				openMessage()
			}
			buf = rs.AppendTextDelta(buf[:0], log.Len(), ev.Delta)
			log.Append(ctx, "response.output_text.delta", buf)
		}
		res, err := h.Wait()
		if h.Finish(&res, err) != nil && !open {
			// Failed, cancelled, or fenced (another host drives it now):
			// the terminal event, if the run ended, says so.
			terminal(ctx, log, rs, store, history, p, run.ID, nil)
			return
		}
		terminal(ctx, log, rs, store, history, p, run.ID, func(obj []byte) {
			text := res.Text
			if v := gjson.GetBytes(obj, "output.0.content.0.text"); v.Type == gjson.String {
				text = v.Str
			}
			if !open {
				if text == "" {
					return
				}
				openMessage()
			}
			log.Append(ctx, "response.output_text.done", rs.AppendTextDone(buf[:0], log.Len(), text))
			log.Append(ctx, "response.content_part.done", rs.AppendPartDone(buf[:0], log.Len(), text))
			log.Append(ctx, "response.output_item.done", rs.AppendItemDone(buf[:0], log.Len(), text))
		})
	}
}

// terminal appends the terminal event of run id, once it has ended, with
// its Response as recorded; before it, done (when not nil) appends the
// message's done events from that Response.
func terminal(ctx context.Context, log *runner.EventLog, rs *framing.ResponseStream, store runner.Store,
	history runner.HistoryStore, p filters.Mapper, id string, done func(obj []byte)) {
	run, err := store.GetRun(ctx, "", id)
	if err != nil || !run.Status.Terminal() || p == nil {
		return
	}
	rec, err := history.GetResponse(ctx, run.TenantID, id)
	if err != nil {
		return
	}
	obj, err := translate.StoredResponse(ctx, p, rec, run)
	if err != nil {
		return
	}
	if done != nil && run.Status == runner.StatusCompleted {
		done(obj)
	}
	name := "response.completed"
	switch gjson.GetBytes(obj, "status").String() {
	case "failed":
		name = "response.failed"
	case "incomplete":
		name = "response.incomplete"
	}
	log.Append(ctx, name, rs.AppendCompleted(nil, log.Len(), obj))
}
