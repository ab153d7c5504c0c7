package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/filters/model"
	"github.com/runedge/runedge/filters/run"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/agent"
	"github.com/runedge/runedge/runner/provider/offline"
	"github.com/runedge/runedge/runner/provider/openai"
)

// POST /v1/responses/input_tokens counts the input tokens of a responses
// request body without running it. The body goes through the stages a
// POST /v1/responses goes through up to the run (auth, body, model,
// map-request with the Responses chain's plugin), so it is refused exactly
// as it would be there; then the resolved input (item references, the
// turns of previous_response_id, instructions first) is counted by the
// provider's rule. No run is created, but resolving the input reads the
// stored history, so it is admitted as a run is: under the in-flight
// limits of the service, the tenant and the token (429 or 503 past them),
// in runedge_runs_in_flight while it reads, and in the request metrics
// under its own endpoint label.

// InputTokensChain builds the chain of POST /v1/responses/input_tokens on
// the Responses chain's request mapping plugin p, reading the body with
// body (the generation's body stage).
func (hs *Handlers) InputTokensChain(a *auth.Auth, body filters.Stage, p *runtime.Plugin) (filters.Handler, error) {
	m, err := mapping.New(p)
	if err != nil {
		return nil, err
	}
	return builtin.Authenticated(a, filters.HandlerFunc(hs.inputTokens),
		body, model.New(), m.WithMedia(hs.Media)), nil
}

// inputTokens answers {"object":"response.input_tokens","input_tokens":N}.
func (hs *Handlers) inputTokens(ctx context.Context, x *filters.Exchange) error {
	in, release, err := hs.Runs.Input(ctx, x.Identity.TenantID, x.Identity.Token, x.Native)
	if err != nil {
		release()
		return run.StartError(x.Endpoint, err)
	}
	req := x.Native
	req.Input = in
	n := countInputTokens(hs.ProviderKind, agent.Messages(req), req.Tools)
	release()
	b := append([]byte(`{"object":"response.input_tokens","input_tokens":`), strconv.Itoa(n)...)
	return x.Reply.JSON(http.StatusOK, append(b, '}'))
}

// InputTokenCounter counts what the agent is given for a request, as
// inputTokens does: what context_management's threshold is held against
// (builtin.Deps.InputTokens).
func InputTokenCounter(cfg *config.Config) func(runner.Request) int {
	kind := cfg.Provider.Kind
	return func(req runner.Request) int { return countInputTokens(kind, agent.Messages(req), req.Tools) }
}

// countInputTokens counts msgs and tools as the configured provider would:
// the offline provider's own rule (the input_tokens its runs report), or
// the openai provider's documented estimate (openai.EstimateInputTokens).
func countInputTokens(kind string, msgs []runner.Message, tools []runner.Tool) int {
	if kind == config.ProviderOpenAI {
		return openai.EstimateInputTokens(msgs, tools)
	}
	return offline.CountInputTokens(msgs)
}
