package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// maxEndpointScan bounds how many runs one page with an endpoint filter
// reads: the store filters tenant, session and status itself, endpoint is
// filtered here.
const maxEndpointScan = 1000

// uiRunsPaging is the operator page's run list: a longer first page than
// the native API's, the same maximum.
var uiRunsPaging = contract.Paging{Default: 50, Max: contract.RunsPaging.Max}

// listRuns answers GET /ui/api/runs?tenant_id=&session_id=&status=&endpoint=&after=&limit=
// with the native list shape, newest first.
func (u *UI) listRuns(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	q := runner.ListQuery{TenantID: qv.Get("tenant_id"), SessionID: qv.Get("session_id"),
		Status: runner.Status(qv.Get("status")), After: qv.Get("after")}
	limit, ok := uiRunsPaging.Limit(qv.Get("limit"))
	if !ok {
		writeError(w, apierr.InvalidBody("limit", "%s", uiRunsPaging.Refusal()))
		return
	}
	q.Limit = limit
	if q.Status != "" && !q.Status.Valid() {
		writeError(w, apierr.InvalidBody("status", "unknown status %q", q.Status))
		return
	}
	endpoint := qv.Get("endpoint")
	if endpoint == "" {
		page, err := u.cfg.Backend.ListRuns(r.Context(), q)
		if err != nil {
			u.fail(w, err)
			return
		}
		writeJSON(w, page)
		return
	}
	want := q.Limit
	out := runner.Page{Object: "list", Data: []runner.Run{}}
	q.Limit = contract.RunsPaging.Max
	for scanned := 0; scanned < maxEndpointScan; {
		page, err := u.cfg.Backend.ListRuns(r.Context(), q)
		if err != nil {
			u.fail(w, err)
			return
		}
		for _, run := range page.Data {
			scanned++
			q.After = run.ID
			if run.Endpoint == endpoint && len(out.Data) < want {
				out.Data = append(out.Data, run)
			}
		}
		out.HasMore = page.HasMore || len(out.Data) == want
		if len(out.Data) == want || !page.HasMore || len(page.Data) == 0 {
			break
		}
	}
	if n := len(out.Data); n > 0 {
		first, last := out.Data[0].ID, out.Data[n-1].ID
		out.FirstID, out.LastID = &first, &last
	}
	writeJSON(w, out)
}

func (u *UI) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := u.cfg.Backend.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		u.fail(w, err)
		return
	}
	writeJSON(w, run)
}

// event is a stored event as the page shows it: data as JSON when it is,
// as a string otherwise.
type event struct {
	Seq  int             `json:"seq"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
	Text string          `json:"text,omitempty"`
}

// maxEvents bounds the events one detail page loads.
const maxEvents = 2000

func (u *UI) runEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := u.cfg.Backend.Run(r.Context(), id); err != nil {
		u.fail(w, err)
		return
	}
	evs, err := u.cfg.Backend.RunEvents(r.Context(), id, maxEvents+1)
	if err != nil {
		u.fail(w, err)
		return
	}
	out := make([]event, 0, min(len(evs), maxEvents))
	for _, e := range evs[:min(len(evs), maxEvents)] {
		v := event{Seq: e.Seq, Name: e.Name}
		if json.Valid(e.Data) {
			v.Data = e.Data
		} else if utf8.Valid(e.Data) {
			v.Text = string(e.Data)
		}
		out = append(out, v)
	}
	writeJSON(w, map[string]any{"object": "list", "data": out, "has_more": len(evs) > maxEvents})
}

func (u *UI) getPlugins(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"plugins": u.cfg.Backend.Plugins(), "swaps": u.cfg.Backend.Swaps()})
}

// fail renders a backend error: not found as 404, anything else as 500
// (logged; its text may say more than the page should).
func (u *UI) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, runner.ErrNotFound) {
		writeError(w, apierr.NotFound("no such run"))
		return
	}
	e := apierr.From(err) // a store outage is 503 here too
	if e.Status >= 500 {
		u.cfg.Log.Error("operator page", "err", err)
	}
	if e.Code == apierr.CodeInternal {
		e.Message = "reading the run store failed"
	}
	writeError(w, e)
}
