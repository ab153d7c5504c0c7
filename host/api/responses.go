package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// The Responses API's stored responses (README.md "Responses that remember"): a
// response is a run, read through the response history beside it. Every
// lookup is scoped to the caller's tenant; another tenant's id, a deleted
// response and one made with store:false all answer 404 like an unknown id.

// storedResponse looks up the stored response id of the caller's tenant.
func (hs *Handlers) storedResponse(ctx context.Context, x *filters.Exchange) (runner.ResponseRecord, runner.Run, error) {
	id := x.Request.PathValue("id")
	notFound := func(err error) error {
		e := apierr.NotFound("no response with id %q", id)
		e.Err = err
		return e
	}
	hist := hs.Runs.History()
	runID, ok := contract.RunIDOf(id)
	if hist == nil || !ok {
		return runner.ResponseRecord{}, runner.Run{}, notFound(nil)
	}
	tenant := x.Identity.TenantID
	rec, err := hist.GetResponse(ctx, tenant, runID)
	if err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return rec, runner.Run{}, notFound(err)
		}
		return rec, runner.Run{}, err
	}
	run, err := hs.Runs.Get(ctx, runner.Scope{TenantID: tenant}, runID)
	if err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return rec, run, notFound(err)
		}
		return rec, run, err
	}
	return rec, run, nil
}

// GetResponse answers GET /v1/responses/{id}, and with ?stream=true the
// stream resumption (replayStream).
func (hs *Handlers) GetResponse(ctx context.Context, x *filters.Exchange) error {
	rec, run, err := hs.storedResponse(ctx, x)
	if err != nil {
		return err
	}
	q := x.Request.URL.Query()
	stream := false
	switch v := q.Get("stream"); v {
	case "true":
		stream = true
	case "", "false":
	default:
		return apierr.InvalidBody("stream", "stream must be true or false")
	}
	// openai-go's GetStreaming asks with a JSON body {"stream":true} on
	// the GET rather than the query; both are honoured. The body stage
	// read it (getBody), under the body deadline.
	if gjson.GetBytes(x.Body, "stream").Bool() {
		stream = true
	}
	if stream {
		release, err := hs.replaySlot(x)
		if err != nil {
			return err
		}
		defer release()
		return hs.replayStream(ctx, x, run, q.Get("starting_after"))
	}
	obj, err := translate.StoredResponse(ctx, hs.Result, rec, run)
	if err != nil {
		return err
	}
	return x.Reply.JSON(http.StatusOK, obj)
}

// replayStream writes the stored stream events after starting_after, then
// follows the live ones until the run's last event: a client that lost
// its stream resumes without losing or repeating an event.
func (hs *Handlers) replayStream(ctx context.Context, x *filters.Exchange, run runner.Run, startingAfter string) error {
	after := -1
	if startingAfter != "" {
		n, err := strconv.Atoi(startingAfter)
		if err != nil || n < 0 {
			return apierr.InvalidBody("starting_after", "starting_after must be a sequence number of 0 or more")
		}
		after = n
	}
	beyond := func(last int) error {
		if last < 0 {
			return apierr.InvalidBody("stream", "this response has no stored stream events: only background responses created with stream true can be streamed again")
		}
		return apierr.InvalidBody("starting_after", "starting_after %d is beyond the stream's last event, %d", after, last)
	}
	if live := hs.Runs.LiveEvents(run.ID); live != nil {
		if after >= live.Len() {
			return beyond(live.Len() - 1)
		}
		if err := filters.FollowEvents(ctx, x.Reply, live, after, false); err != nil {
			return err
		}
		return hs.endEvent(ctx, x, run.ID, live.Len()-1)
	}
	h := hs.Runs.History()
	last, err := writeStored(ctx, x, h, run.ID, after, false)
	if err != nil {
		return err
	}
	if !run.Status.Terminal() && run.Status != runner.StatusWaiting && (last > after || after < 0 || hasEvent(ctx, h, run.ID, after)) {
		// The run goes on, on this host or another (a takeover moves
		// it): follow it, not the host.
		return hs.followRun(ctx, x, run.ID, last)
	}
	if last > after {
		return hs.endEvent(ctx, x, run.ID, last)
	}
	// Nothing after the cursor: the stream has no events, the client has
	// its last one (an empty stream), or it asks beyond it.
	evs, err := h.Events(ctx, run.ID, -1, 1)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return beyond(-1)
	}
	if evs, err = h.Events(ctx, run.ID, after-1, 1); err != nil {
		return err
	}
	if len(evs) == 0 || evs[0].Seq != after {
		return apierr.InvalidBody("starting_after", "starting_after %d is beyond the stream's last event", after)
	}
	if err := x.Reply.StartStream(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// DeleteResponse answers DELETE /v1/responses/{id}: the stored input,
// output and events go; the run row stays, marked deleted.
func (hs *Handlers) DeleteResponse(ctx context.Context, x *filters.Exchange) error {
	_, run, err := hs.storedResponse(ctx, x)
	if err != nil {
		return err
	}
	if err := hs.Runs.DeleteResponse(ctx, x.Identity.TenantID, run.ID); err != nil {
		if errors.Is(err, runner.ErrNotFound) {
			return apierr.NotFound("no response with id %q", x.Request.PathValue("id"))
		}
		return err
	}
	return WriteJSON(x, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{x.Request.PathValue("id"), "response", true})
}

// CancelResponse answers POST /v1/responses/{id}/cancel. As with OpenAI,
// only a background response can be cancelled; cancelling one that was
// already cancelled returns it again, one that ended otherwise is a 400.
func (hs *Handlers) CancelResponse(ctx context.Context, x *filters.Exchange) error {
	rec, run, err := hs.storedResponse(ctx, x)
	if err != nil {
		return err
	}
	if !rec.Background {
		return apierr.InvalidBody("", "only background responses can be cancelled")
	}
	if run.Status.Terminal() && run.Status != runner.StatusCancelled {
		return apierr.InvalidBody("", "the response has already %s and cannot be cancelled", run.Status)
	}
	if run, err = hs.Runs.Cancel(ctx, runner.Scope{TenantID: x.Identity.TenantID}, run.ID); err != nil {
		return runError(err, x.Request.PathValue("id"))
	}
	if rec, err = hs.Runs.History().GetResponse(ctx, x.Identity.TenantID, run.ID); err != nil {
		return err
	}
	obj, err := translate.StoredResponse(ctx, hs.Result, rec, run)
	if err != nil {
		return err
	}
	return x.Reply.JSON(http.StatusOK, obj)
}

// ListInputItems answers GET /v1/responses/{id}/input_items
// (?limit=&after=&order=), OpenAI's list shape.
func (hs *Handlers) ListInputItems(ctx context.Context, x *filters.Exchange) error {
	_, run, err := hs.storedResponse(ctx, x)
	if err != nil {
		return err
	}
	q := x.Request.URL.Query()
	limit, desc, err := itemPaging(x, contract.InputItemsPaging)
	if err != nil {
		return err
	}
	all, err := hs.Runs.History().ResponseItems(ctx, run.ID)
	if err != nil {
		return err
	}
	var items []runner.Item
	for _, it := range all {
		if !it.Output {
			items = append(items, it)
		}
	}
	if desc {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	if after := q.Get("after"); after != "" {
		i := 0
		for i < len(items) && itemID(items[i]) != after {
			i++
		}
		if i == len(items) {
			return apierr.InvalidBody("after", "after %q is not an input item of this response", after)
		}
		items = items[i+1:]
	}
	page := itemPage{Object: "list", Data: []json.RawMessage{}}
	if len(items) > limit {
		items, page.HasMore = items[:limit], true
	}
	for _, it := range items {
		page.Data = append(page.Data, itemJSON(it))
	}
	if len(items) > 0 {
		first, last := itemID(items[0]), itemID(items[len(items)-1])
		page.FirstID, page.LastID = &first, &last
	}
	return WriteJSON(x, page)
}

// itemPaging reads an item list's ?limit= (paging's) and ?order= (asc or
// desc, default desc), as OpenAI's lists take them.
func itemPaging(x *filters.Exchange, paging contract.Paging) (limit int, desc bool, err error) {
	q := x.Request.URL.Query()
	limit, ok := paging.Limit(q.Get("limit"))
	if !ok {
		return 0, false, apierr.InvalidBody("limit", "%s", paging.Refusal())
	}
	switch q.Get("order") {
	case "", "desc":
		return limit, true, nil
	case "asc":
		return limit, false, nil
	}
	return 0, false, apierr.InvalidBody("order", "order must be asc or desc")
}

type itemPage struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID *string           `json:"first_id"`
	LastID  *string           `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

// itemID is the id a listed item shows: its own, or for a reference the
// id of the item it names.
func itemID(it runner.Item) string {
	if it.Message.Ref != "" {
		return it.Message.Ref
	}
	return it.ID
}
