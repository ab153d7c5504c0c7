package runner

import (
	"context"

	"github.com/runedge/runedge/internal/contract"
)

// Input resolves what a responses request gives the agent, as a run of it
// would (item references from the tenant's stored items, the turns of
// previous_response_id first), without creating a run or writing anything:
// POST /v1/responses/input_tokens counts it, and context_management holds
// it against its threshold. Reading the history costs what the history
// holds, so Input takes an admission slot of tenantID and token as a run
// does (the same in-flight limits; ErrUnavailable, ErrTenantBusy,
// ErrTokenBusy when there is none) and holds it while it reads; the slot
// is counted in InFlight and cancelled by CancelAll. The caller holds the
// slot until it calls release (once, also after an error): what it does
// with the input (counting it) is work of the same size. Its other errors
// are Start's for the same request (ErrItemNotFound,
// ErrPreviousResponseNotFound, …).
func (s *Service) Input(ctx context.Context, tenantID, token string, req Request) (in []Message, release func(), err error) {
	h := newHandle(ctx, s, Run{ID: NewID(contract.RunPrefix), TenantID: tenantID}, false)
	h.token = token
	if err := s.admit(h); err != nil {
		h.discard()
		return nil, func() {}, err
	}
	release = func() {
		h.discard()
		s.release(h)
	}
	spec := StartSpec{TenantID: tenantID, Token: token, Request: req}
	spec.Request.Background = false // no run: nothing to store
	in, _, err = s.prepare(h.ctx, &spec, true)
	return in, release, err
}
