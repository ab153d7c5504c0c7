// Package agent is the reference agent: it turns a native run request into
// provider calls and makes sure structured output is what the client asked
// for before any of it leaves the runner.
package agent

import (
	"context"
	"fmt"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// Agent implements runner.Agent on top of one provider.
type Agent struct {
	p runner.Provider
}

var (
	_ runner.InlineAgent      = (*Agent)(nil)
	_ runner.PreparingAgent   = (*Agent)(nil)
	_ runner.PendingTextAgent = (*Agent)(nil)
)

// New returns the reference agent for provider p.
func New(p runner.Provider) *Agent { return &Agent{p: p} }

// Inline implements runner.InlineAgent: a request with no output schema
// nor json_object (whose validation runs here) to a provider that answers
// in process.
func (a *Agent) Inline(req runner.Request) bool {
	p, ok := a.p.(runner.InProcessProvider)
	return ok && p.InProcess() && len(req.OutputSchema) == 0 && !req.JSONObject
}

// TakesPendingTexts implements runner.PendingTextAgent: the agent reads
// no message's text itself, so it takes pending texts when its provider
// does (runner.PendingTextProvider).
func (a *Agent) TakesPendingTexts() bool {
	p, ok := a.p.(runner.PendingTextProvider)
	return ok && p.TakesPendingTexts()
}

// Run asks the provider for the answer to req.
//
// Free text and tool calls stream through as the provider produces them,
// in one provider call. Structured output (an output schema, or json_object) is buffered,
// checked, and only then emitted: a client that asked for JSON must never
// receive a half-valid document it has already started to parse. A
// document that fails the check gets one repair attempt (see
// structured.go); if that fails too, the error wraps
// runner.ErrOutputInvalid and nothing is emitted.
//
// With tools, structured output applies to the final answer: an answer that
// is tool calls is passed on as it is (the client runs them and asks again);
// the text answer after the tool results is checked against the schema.
//
// The result's Attempts counts the provider calls, on failure too.
func (a *Agent) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	if emit == nil {
		emit = func(runner.Event) error { return nil }
	}
	if req.MaxToolCalls > 0 {
		emit = boundCalls(req.MaxToolCalls, emit)
	}
	var sch *schema.Schema
	if len(req.OutputSchema) > 0 {
		var err error
		if sch, err = schema.CompileContext(ctx, req.OutputSchema); err != nil {
			return runner.Result{}, fmt.Errorf("%w: output_schema: %v", runner.ErrInvalidRequest, err)
		}
	}
	preq := providerRequest(req)
	o := offer{tools: req.Tools, choice: req.ToolChoice}
	maxCalls, plain := req.MaxToolCalls, sch == nil && !req.JSONObject
	// From here on only preq holds the messages, and the provider call is
	// its last use: a long call must not keep a second copy alive (a
	// background run's input may be megabytes). req is cleared rather than
	// left to liveness analysis, which keeps a struct argument whole.
	req = runner.Request{}
	var res runner.Result
	var err error
	if plain {
		res, err = a.generate(ctx, o, preq, emit)
	} else {
		res, err = a.structured(ctx, o, preq, sch, emit)
	}
	if maxCalls > 0 && len(res.ToolCalls) > maxCalls {
		res.ToolCalls = res.ToolCalls[:maxCalls]
	}
	return res, err
}

// providerRequest is the first provider call's request for req.
func providerRequest(req runner.Request) runner.ProviderRequest {
	preq := runner.ProviderRequest{
		Messages:          messages(req),
		Tools:             req.Tools,
		ToolChoice:        req.ToolChoice,
		ParallelToolCalls: req.ParallelToolCalls,
		OutputSchema:      req.OutputSchema,
		SchemaName:        req.SchemaName,
		JSONObject:        req.JSONObject,
		MaxOutputTokens:   req.MaxOutputTokens,
		Stream:            req.Stream,
		Upstream:          req.Upstream,
		Attempt:           1,
	}
	if req.MaxToolCalls == 1 && len(req.Tools) > 0 {
		// One call at most: ask the model for no parallel calls.
		off := false
		preq.ParallelToolCalls = &off
	}
	return preq
}

// Prepare implements runner.PreparingAgent: a request without an output
// schema nor json_object (one provider call, nothing to repair) to a
// provider that writes its upstream request ahead (runner.PreparingProvider)
// gets that request written now, and the run Run would make of req. The
// run holds req's tools and tool choice (to check the calls), not its
// input.
func (a *Agent) Prepare(req runner.Request) (runner.PreparedRun, bool) {
	pp, ok := a.p.(runner.PreparingProvider)
	if !ok || len(req.OutputSchema) > 0 || req.JSONObject {
		return nil, false
	}
	gen, ok := pp.Prepare(providerRequest(req))
	if !ok {
		return nil, false
	}
	o := offer{tools: req.Tools, choice: req.ToolChoice}
	maxCalls := req.MaxToolCalls
	return func(ctx context.Context, emit func(runner.Event) error) (runner.Result, error) {
		if emit == nil {
			emit = func(runner.Event) error { return nil }
		}
		if maxCalls > 0 {
			emit = boundCalls(maxCalls, emit)
		}
		res, err := gen(ctx, emit)
		res.Attempts = 1
		if err == nil {
			err = checkCalls(o, res)
		}
		if maxCalls > 0 && len(res.ToolCalls) > maxCalls {
			res.ToolCalls = res.ToolCalls[:maxCalls]
		}
		return res, err
	}, true
}

// generate is one provider call without an output schema. It is a function
// of its own so that the messages (in preq) are not live in Run's frame
// while the call waits: a background run's input may be megabytes.
func (a *Agent) generate(ctx context.Context, o offer, preq runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	res, err := a.p.Generate(ctx, preq, emit)
	res.Attempts = 1
	if err == nil {
		err = checkCalls(o, res)
	}
	return res, err
}

// messages puts the instructions first, as a system message, the way chat
// providers expect them.
func messages(req runner.Request) []runner.Message {
	if req.Instructions == "" {
		return req.Input
	}
	out := make([]runner.Message, 0, len(req.Input)+1)
	out = append(out, runner.Message{Role: "system", Content: req.Instructions})
	return append(out, req.Input...)
}

// Messages is the conversation the agent sends its provider for req, whose
// Input is resolved (runner.Service.Input): the instructions first, as a
// system message, then the input.
func Messages(req runner.Request) []runner.Message { return messages(req) }
