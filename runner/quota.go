package runner

import "context"

// reserve takes the run's estimate from the budgets of m, before the run
// is admitted: the input the agent is given, counted as the provider
// counts it, plus the output the request allows (max_output_tokens, else
// m.DefaultMaxOutput). A refusal creates no run.
func (h *Handle) reserve(ctx context.Context, m *Metering, req Request) error {
	var in int64
	if m.InputTokens != nil {
		in = int64(m.InputTokens(req))
	}
	out := int64(req.MaxOutputTokens)
	if out <= 0 {
		out = int64(m.DefaultMaxOutput)
	}
	est := UsageEntry{InputTokens: in, OutputTokens: out}
	settle, st, err := m.Quota.Reserve(ctx, QuotaClaim{TenantID: h.run.TenantID, Token: h.token,
		ActorID: h.run.Actor.ID, Tokens: in + out, CostNanos: m.Price.CostNanos(&est)})
	if err != nil {
		return err
	}
	h.settle, h.quota = settle, st
	return nil
}

// unreserve gives back the estimate of a run that never started.
func (h *Handle) unreserve(ctx context.Context) { h.settleQuota(ctx, nil) }

// settleQuota replaces the run's estimate by what it used (nothing
// without a ledger line). A run in flight is never cut off by its
// budget: this is the only place its spending meets it again.
func (h *Handle) settleQuota(ctx context.Context, e *UsageEntry) {
	if h.settle == nil {
		return
	}
	settle := h.settle
	h.settle = nil
	if e == nil {
		settle(ctx, 0, 0)
		return
	}
	settle(ctx, e.Total(), e.CostNanos)
}

// Quota is what the tightest token budget of the run had left when it was
// admitted (Limit 0: no token budget applies).
func (h *Handle) Quota() QuotaStatus { return h.quota }
