package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Page is an OpenAI-style list of runs, newest first.
type Page struct {
	Object  string  `json:"object"` // "list"
	Data    []Run   `json:"data"`   // never null
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// Get returns run id if the scope may see it; another tenant's run is
// ErrNotFound, exactly like an unknown id.
func (s *Service) Get(ctx context.Context, sc Scope, id string) (Run, error) {
	tenant := sc.TenantID
	if sc.Admin {
		tenant = ""
	}
	r, err := s.store.GetRun(ctx, tenant, id)
	if err != nil {
		return Run{}, err
	}
	// The store reads tenant "" as "any"; a non-admin scope must match
	// exactly.
	if !sc.Admin && r.TenantID != sc.TenantID {
		return Run{}, fmt.Errorf("%w: run %s", ErrNotFound, id)
	}
	r.Object = "run"
	return withCalls(r), nil
}

// List returns a page of runs. A non-admin scope lists only its tenant
// (q.TenantID is overridden); an admin lists q.TenantID, "" meaning all.
func (s *Service) List(ctx context.Context, sc Scope, q ListQuery) (Page, error) {
	page := Page{Object: "list", Data: []Run{}}
	if q.Status != "" && !q.Status.Valid() {
		return Page{}, fmt.Errorf("%w: unknown status %q", ErrInvalidRequest, q.Status)
	}
	if !sc.Admin {
		if sc.TenantID == "" {
			return page, nil // see Scope: "" would list every tenant
		}
		q.TenantID = sc.TenantID
	}
	runs, more, err := s.store.ListRuns(ctx, q)
	if err != nil {
		return Page{}, err
	}
	for i := range runs {
		runs[i].Object = "run"
		runs[i] = withCalls(runs[i])
	}
	if len(runs) > 0 {
		page.Data = runs
		first, last := runs[0].ID, runs[len(runs)-1].ID
		page.FirstID, page.LastID = &first, &last
	}
	page.HasMore = more
	return page, nil
}

// Cancel cancels run id. A run in flight here is cancelled
// (cancelled/cancel_requested) and Cancel waits until its owner has recorded
// that; a waiting or queued run is moved to cancelled directly; a terminal
// run is returned unchanged. A running run of another host (a shared
// store) is relayed to that host when the store can (CancelRelay), and
// Cancel waits until that host has recorded the outcome (or CancelWait
// passed, returning the run as it then is); without a relay it is
// returned unchanged: only its own process can stop its agent.
func (s *Service) Cancel(ctx context.Context, sc Scope, id string) (Run, error) {
	r, err := s.Get(ctx, sc, id)
	if err != nil || r.Status.Terminal() {
		return r, err
	}
	if h := s.inFlight(id); h != nil {
		h.cancel(cancelCause{reason: ReasonCancelRequested})
		select {
		case <-h.finished:
		case <-ctx.Done():
			return Run{}, ctx.Err()
		}
		if r, err = s.Get(ctx, sc, id); err != nil {
			return Run{}, err
		}
	} else if r.Status == StatusRunning && r.HostID != s.host && s.relay != nil {
		return s.cancelElsewhere(ctx, sc, r)
	}
	if r.Status != StatusWaiting && r.Status != StatusQueued {
		return r, nil
	}
	now := s.now().Unix()
	err = s.store.Transition(ctx, id, Transition{Status: StatusCancelled, Reason: ReasonCancelRequested, EndedAt: &now})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Run{}, err
	}
	// ErrNotFound here means another writer ended it first; report that.
	return s.Get(ctx, sc, id)
}

// cancelElsewhere relays a cancel to the host running r and polls the store
// until that host has recorded the outcome.
func (s *Service) cancelElsewhere(ctx context.Context, sc Scope, r Run) (Run, error) {
	if err := s.relay.RelayCancel(ctx, r.HostID, r.ID); err != nil {
		return Run{}, err
	}
	deadline := time.NewTimer(s.cancelWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return Run{}, ctx.Err()
		case <-deadline.C:
			s.log.Warn("runner: relayed cancel not recorded in time", "run_id", r.ID, "host_id", r.HostID)
			return r, nil
		case <-tick.C:
		}
		cur, err := s.Get(ctx, sc, r.ID)
		if err != nil {
			return Run{}, err
		}
		if cur.Status.Terminal() || cur.Status == StatusWaiting {
			return cur, nil
		}
		r = cur
	}
}
