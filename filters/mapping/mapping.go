// Package mapping is the map-request stage: a mapping plugin (WebAssembly)
// turns the compatible request body into the native run request.
package mapping

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner/schema"
)

// Mapping is the map-request stage.
type Mapping struct {
	plugin *runtime.Plugin
}

var _ filters.Stage = (*Mapping)(nil)

// New builds the stage around a loaded plugin that exports map_request.
func New(p *runtime.Plugin) (*Mapping, error) {
	if !p.Has(runtime.MapRequest) {
		return nil, fmt.Errorf("map-request: plugin %s does not export map_request", p.Name())
	}
	return &Mapping{plugin: p}, nil
}

// Name implements filters.Stage.
func (m *Mapping) Name() string { return "map-request" }

// Handle implements filters.Stage.
func (m *Mapping) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	out, err := m.plugin.Call(ctx, runtime.MapRequest, Envelope(nil, x))
	if err != nil {
		return filters.PluginError(err)
	}
	req := gjson.GetBytes(out, "request")
	if !req.IsObject() {
		return m.garbage("its output has no request object")
	}
	// A schema nested too deeply for the decoder is the client's mistake,
	// which the run stage (schema.Check) would refuse, but it fails here
	// first: refuse it as the run stage does.
	if s := req.Get("output_schema"); s.Exists() {
		if err := schema.CheckDepth([]byte(s.Raw)); err != nil {
			e := apierr.InvalidBody(filters.SchemaParam(x.Endpoint), "%s", err.Error())
			e.Code = apierr.CodeInvalidSchema
			return e
		}
	}
	if err := json.Unmarshal([]byte(req.Raw), &x.Native); err != nil {
		return m.garbage("its request object does not decode: " + err.Error())
	}
	if len(x.Native.Input) == 0 {
		return m.garbage("its request has no input messages")
	}
	// The model stage's view of the stream flag is the one the edge acts on.
	x.Native.Stream = x.Stream
	if e := gjson.GetBytes(out, "echo"); e.Exists() {
		x.Echo = []byte(e.Raw)
	}
	return next.Handle(ctx, x)
}

func (m *Mapping) garbage(what string) error {
	return &apierr.Error{Status: http.StatusInternalServerError, Type: apierr.TypeServer,
		Code:    apierr.CodePluginError,
		Message: "plugin " + m.plugin.Name() + ": map_request: " + what}
}

// Envelope appends the map_request input (plugins/ABI.md):
// {"endpoint","tenant_id","actor":{"id","type","name"},"body":<raw body>}.
// The body is spliced in as it came: the model stage checked it is JSON.
func Envelope(dst []byte, x *filters.Exchange) []byte {
	dst = append(dst, `{"endpoint":`...)
	dst = compat.AppendJSONString(dst, string(x.Endpoint))
	dst = append(dst, `,"tenant_id":`...)
	dst = compat.AppendJSONString(dst, x.Identity.TenantID)
	dst = append(dst, `,"actor":{"id":`...)
	dst = compat.AppendJSONString(dst, x.Identity.Actor.ID)
	dst = append(dst, `,"type":`...)
	dst = compat.AppendJSONString(dst, x.Identity.Actor.Type)
	dst = append(dst, `,"name":`...)
	dst = compat.AppendJSONString(dst, x.Identity.Actor.Name)
	dst = append(dst, `},"body":`...)
	dst = append(dst, x.Body...)
	return append(dst, '}')
}
