package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
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
// provider's rule. No run is created.

// inputTokensChain builds the chain of POST /v1/responses/input_tokens on
// the Responses chain's request mapping plugin p.
func (s *Server) inputTokensChain(a *auth.Auth, cfg *config.Config, p *runtime.Plugin) (filters.Handler, error) {
	m, err := mapping.New(p)
	if err != nil {
		return nil, err
	}
	return builtin.Authenticated(a, filters.HandlerFunc(s.inputTokens),
		bodystage.New(cfg.Limits.MaxBodyBytes, cfg.Limits.ReadBodyTimeout.Std()), model.New(), m), nil
}

// inputTokens answers {"object":"response.input_tokens","input_tokens":N}.
func (s *Server) inputTokens(ctx context.Context, x *filters.Exchange) error {
	in, err := s.runs.Input(ctx, x.Identity.TenantID, x.Native)
	if err != nil {
		return run.StartError(x.Endpoint, err)
	}
	req := x.Native
	req.Input = in
	n := countInputTokens(s.cfg.Provider.Kind, agent.Messages(req), req.Tools)
	b := append([]byte(`{"object":"response.input_tokens","input_tokens":`), strconv.Itoa(n)...)
	return x.Reply.JSON(http.StatusOK, append(b, '}'))
}

// inputTokenCounter counts what the agent is given for a request, as
// inputTokens does: what context_management's threshold is held against.
func inputTokenCounter(cfg *config.Config) func(runner.Request) int {
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
