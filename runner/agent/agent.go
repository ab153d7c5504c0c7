// Package agent is the reference agent: it turns a native run request into
// one provider call and makes sure structured output is what the client
// asked for before any of it leaves the runner.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// Agent implements runner.Agent on top of one provider.
type Agent struct {
	p runner.Provider
}

var _ runner.Agent = (*Agent)(nil)

// New returns the reference agent for provider p.
func New(p runner.Provider) *Agent { return &Agent{p: p} }

// Run asks the provider for the answer to req.
//
// Free text streams through as the provider produces it. Structured output
// (an output schema, or json_object) is buffered, checked, and only then
// emitted: a client that asked for JSON must never receive a half-valid
// document it has already started to parse. A document that fails the check
// is an error wrapping runner.ErrOutputInvalid, and nothing of it is
// emitted.
func (a *Agent) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	if emit == nil {
		emit = func(runner.Event) error { return nil }
	}
	var sch *schema.Schema
	if len(req.OutputSchema) > 0 {
		var err error
		if sch, err = schema.Compile(req.OutputSchema); err != nil {
			return runner.Result{}, fmt.Errorf("%w: output_schema: %v", runner.ErrInvalidRequest, err)
		}
	}
	preq := runner.ProviderRequest{
		Messages:        messages(req),
		OutputSchema:    req.OutputSchema,
		SchemaName:      req.SchemaName,
		JSONObject:      req.JSONObject,
		MaxOutputTokens: req.MaxOutputTokens,
	}
	if sch == nil && !req.JSONObject {
		return a.p.Generate(ctx, preq, func(d string) error { return emit(runner.Event{Delta: d}) })
	}

	var buf strings.Builder
	res, err := a.p.Generate(ctx, preq, func(d string) error {
		buf.WriteString(d)
		return ctx.Err() // buffering never blocks; stop only when the run is over
	})
	if err != nil {
		return res, err
	}
	if res.Text == "" {
		res.Text = buf.String()
	}
	if err := check(sch, req.JSONObject, res.Text); err != nil {
		return res, err
	}
	if err := emit(runner.Event{Delta: res.Text}); err != nil {
		return res, err
	}
	return res, nil
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

// check validates structured output against the schema, or, for
// json_object, that it is a single JSON object.
func check(sch *schema.Schema, jsonObject bool, text string) error {
	if sch != nil {
		if err := sch.Validate([]byte(text)); err != nil {
			return fmt.Errorf("%w: %v", runner.ErrOutputInvalid, err)
		}
		return nil
	}
	if jsonObject {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			return fmt.Errorf("%w: output is not a JSON object", runner.ErrOutputInvalid)
		}
	}
	return nil
}
