package runner

import "context"

// Input resolves what a responses request gives the agent, as a run of it
// would (item references from the tenant's stored items, the turns of
// previous_response_id first), without creating a run or writing anything:
// POST /v1/responses/input_tokens counts it. Its errors are Start's for the
// same request (ErrItemNotFound, ErrPreviousResponseNotFound, …).
func (s *Service) Input(ctx context.Context, tenantID string, req Request) ([]Message, error) {
	spec := StartSpec{TenantID: tenantID, Request: req}
	spec.Request.Background = false // no run: nothing to store
	in, _, err := s.prepare(ctx, &spec)
	return in, err
}
