// Package mapping is the map-request stage: a mapping plugin (WebAssembly)
// turns the compatible request body into the native run request.
package mapping

import (
	"context"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// Mapping is the map-request stage.
type Mapping struct {
	plugin filters.Mapper
	hosted Hosted
}

var _ filters.Stage = (*Mapping)(nil)

// New builds the stage around a loaded plugin (a *runtime.Plugin) that
// exports map_request.
func New(p filters.Mapper) (*Mapping, error) {
	if !p.Has(runtime.MapRequest) {
		return nil, fmt.Errorf("map-request: plugin %s does not export map_request", p.Name())
	}
	return &Mapping{plugin: p}, nil
}

// WithHosted sets what the stage does with withheld hosted tools.
func (m *Mapping) WithHosted(h Hosted) *Mapping {
	m.hosted = h
	return m
}

// Name implements filters.Stage.
func (m *Mapping) Name() string { return contract.StageMapRequest }

// Handle implements filters.Stage.
func (m *Mapping) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	in := requestInput(x)
	out, err := m.plugin.MapRequest(ctx, &in)
	if err != nil {
		return filters.PluginError(err)
	}
	o, err := abi.DecodeRequestOutput(out)
	if err != nil {
		// A schema nested too deeply for the decoder is the client's
		// mistake, which the run stage (schema.Check) would refuse, but it
		// fails here first: refuse it as the run stage does. Only a failed
		// decode looks for it, so a request's output is read once.
		if s := gjson.GetBytes(out, "request.output_schema"); s.Exists() {
			if err := checkSchemaDepth(x, []byte(s.Raw)); err != nil {
				return err
			}
		}
		return filters.PluginOutputError(m.plugin.Name(), runtime.MapRequest, err)
	}
	if err := checkSchemaDepth(x, o.Request.OutputSchema); err != nil {
		return err
	}
	if err := m.hosted.check(o.Request.WithheldTools); err != nil {
		return err
	}
	x.Native = o.Request
	if c := x.Conversation; c != nil && len(c.Items) > 0 {
		if c.Messages, err = m.history(ctx, x, c.Items); err != nil {
			return err
		}
	}
	// The model stage's view of the stream flag is the one the edge acts on.
	x.Native.Stream = x.Stream
	x.Echo = o.Echo
	return next.Handle(ctx, x)
}

// checkSchemaDepth refuses a schema nested deeper than the run stage
// allows, as the run stage would (400 invalid_schema).
func checkSchemaDepth(x *filters.Exchange, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if err := schema.CheckDepth(raw); err != nil {
		return apierr.Param(apierr.CodeInvalidSchema, filters.SchemaParam(x.Endpoint), err.Error())
	}
	return nil
}

// requestInput is the map_request input of x. Its body is the client's
// as it came: the model stage checked it is JSON.
func requestInput(x *filters.Exchange) abi.RequestInput {
	return abi.RequestInput{
		Endpoint: string(x.Endpoint),
		TenantID: x.Identity.TenantID,
		Actor:    abi.Actor{ID: x.Identity.Actor.ID, Type: x.Identity.Actor.Type, Name: x.Identity.Actor.Name},
		Body:     x.Body,
	}
}

// history maps a conversation's items (filters/conversation) on their own,
// as the input of a request that has nothing else, so the run can give them
// to the agent without storing them again as the response's input.
func (m *Mapping) history(ctx context.Context, x *filters.Exchange, items []byte) ([]runner.Message, error) {
	body, err := sjson.SetRawBytes([]byte(`{"model":"service"}`), "input", items)
	if err != nil {
		return nil, err
	}
	hx := *x
	hx.Body = body
	in := requestInput(&hx)
	out, err := m.plugin.MapRequest(ctx, &in)
	if err != nil {
		return nil, filters.PluginError(err)
	}
	o, err := abi.DecodeRequestOutput(out)
	if err != nil {
		return nil, filters.PluginOutputError(m.plugin.Name(), runtime.MapRequest, err)
	}
	return o.Request.Input, nil
}
