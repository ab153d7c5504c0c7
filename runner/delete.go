package runner

import "context"

// DeleteResponse deletes a stored response of tenant (HistoryStore.DeleteResponse)
// and, when it is still running, stops it: its event log is dropped, its
// outcome is recorded without output, and the run is cancelled (on
// whichever host runs it). From the delete on, the store refuses the
// response's events and output (their writes name only undeleted
// responses), so nothing of it is kept or served again. A response still
// running on another host is cancelled through the CancelRelay.
func (s *Service) DeleteResponse(ctx context.Context, tenantID, runID string) error {
	// Marked before the store's delete, so that an outcome recorded
	// between the two carries no output either.
	h := s.inFlight(runID)
	if h != nil && h.run.TenantID == tenantID {
		h.deleted.Store(true)
	}
	if err := s.history.DeleteResponse(ctx, tenantID, runID); err != nil {
		if h != nil && h.run.TenantID == tenantID {
			h.deleted.Store(false)
		}
		return err
	}
	if l := s.LiveEvents(runID); l != nil {
		l.Drop()
	}
	r, err := s.Get(ctx, Scope{TenantID: tenantID}, runID)
	if err != nil || r.Status.Terminal() {
		return nil // deleted; the run row is not the client's concern
	}
	if _, err := s.Cancel(ctx, Scope{TenantID: tenantID}, runID); err != nil {
		s.log.Warn("runner: cannot cancel a deleted response", "run_id", runID, "err", err)
	}
	return nil
}
