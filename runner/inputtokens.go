package runner

import (
	"context"
)

// Input resolves what a responses request gives the agent, as a run of it
// would (item references from the tenant's stored items, the turns of
// previous_response_id first), without creating a run or writing
// anything: POST /v1/responses/input_tokens counts it. It is Context for
// a request alone (no earlier items of a conversation).
func (s *Service) Input(ctx context.Context, tenantID, token string, req Request) (in []Message, release func(), err error) {
	return s.Context(ctx, StartSpec{TenantID: tenantID, Token: token, Request: req})
}
