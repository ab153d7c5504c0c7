package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// scope is what the caller may see: its own tenant, or all with an admin
// token.
func scope(x *filters.Exchange) runner.Scope {
	return runner.Scope{TenantID: x.Identity.TenantID, Admin: x.Identity.Admin}
}

// ListRuns answers GET /runner/v1/runs?limit=&after=&tenant_id=&session_id=&status=
func (hs *Handlers) ListRuns(ctx context.Context, x *filters.Exchange) error {
	q := x.Request.URL.Query()
	lq := runner.ListQuery{After: q.Get("after"), SessionID: q.Get("session_id"), TenantID: q.Get("tenant_id"),
		Status: runner.Status(q.Get("status"))}
	limit, ok := contract.RunsPaging.Limit(q.Get("limit"))
	if !ok {
		return apierr.InvalidBody("limit", "%s", contract.RunsPaging.Refusal())
	}
	lq.Limit = limit
	if lq.Status != "" && !lq.Status.Valid() {
		return apierr.InvalidBody("status", "unknown status %q", lq.Status)
	}
	sc := scope(x)
	if !sc.Admin && lq.TenantID != "" && lq.TenantID != sc.TenantID {
		// Another tenant's runs are invisible: the filter matches nothing.
		return WriteJSON(x, runner.Page{Object: "list", Data: []runner.Run{}})
	}
	page, err := hs.Runs.List(ctx, sc, lq)
	if err != nil {
		return err
	}
	return WriteJSON(x, page)
}

func (hs *Handlers) GetRun(ctx context.Context, x *filters.Exchange) error {
	r, err := hs.Runs.Get(ctx, scope(x), x.Request.PathValue("id"))
	if err != nil {
		return runError(err, x.Request.PathValue("id"))
	}
	return WriteJSON(x, RunView(r))
}

// RunWithIO is the run object with what the run was given and what it
// answered: the native input and output, left out for a run of
// store:false or a deleted response, which keep neither.
type RunWithIO struct {
	runner.Run
	Input  []runner.Message `json:"input,omitempty"`
	Output *string          `json:"output,omitempty"`
}

func RunView(r runner.Run) RunWithIO {
	v := RunWithIO{Run: r}
	var req runner.Request
	if len(r.Request) == 0 || json.Unmarshal(r.Request, &req) != nil || req.NoStore {
		return v
	}
	v.Input = req.Input
	if r.Status.Terminal() {
		out := r.Output
		v.Output = &out
	}
	return v
}

// RunEvents answers GET /runner/v1/runs/{id}/events: the run's stream
// events as SSE with ids (their sequence numbers), live while it runs,
// resumable with Last-Event-ID.
func (hs *Handlers) RunEvents(ctx context.Context, x *filters.Exchange) error {
	r, err := hs.Runs.Get(ctx, scope(x), x.Request.PathValue("id"))
	if err != nil {
		return runError(err, x.Request.PathValue("id"))
	}
	after := -1
	if v := x.Request.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return apierr.InvalidHeader("Last-Event-ID", "Last-Event-ID must be an event id from this stream")
		}
		after = n
	}
	h := hs.Runs.History()
	if h != nil && r.Endpoint == contract.EndpointResponses {
		// A response's events are its history's: a deleted response, or
		// one of store:false, has none to show.
		if _, err := h.GetResponse(ctx, r.TenantID, r.ID); err != nil {
			return runError(err, x.Request.PathValue("id"))
		}
	}
	release, err := hs.replaySlot(x)
	if err != nil {
		return err
	}
	defer release()
	if live := hs.Runs.LiveEvents(r.ID); live != nil {
		return filters.FollowEvents(ctx, x.Reply, live, after, true)
	}
	if err := x.Reply.StartStream(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	if h == nil {
		return nil
	}
	_, err = writeStored(ctx, x, h, r.ID, after, true)
	return err
}

func (hs *Handlers) CancelRun(ctx context.Context, x *filters.Exchange) error {
	r, err := hs.Runs.Cancel(ctx, scope(x), x.Request.PathValue("id"))
	if err != nil {
		return runError(err, x.Request.PathValue("id"))
	}
	return WriteJSON(x, r)
}

func runError(err error, id string) error {
	if errors.Is(err, runner.ErrNotFound) {
		e := apierr.NotFound("no run with id %q", id)
		e.Err = err
		return e
	}
	return err
}

func WriteJSON(x *filters.Exchange, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return x.Reply.JSON(http.StatusOK, b)
}
