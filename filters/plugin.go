package filters

import (
	"context"
	"errors"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
)

// Mapper is what the mapping stages (map-request, translate) use of a
// plugin. In the host it is always a *runtime.Plugin; the interface is a
// seam for the stages' own tests, which script a plugin's replies and count
// its calls without WebAssembly (filtertest.Mapper). MapRequest and
// MapResult take the hooks' inputs as the host holds them: a plugin
// written to WebAssembly gets them as JSON envelopes, the native default
// reads them in place (runtime.Plugin.MapRequest).
type Mapper interface {
	Name() string
	Has(h runtime.Hook) bool
	Call(ctx context.Context, h runtime.Hook, in []byte) ([]byte, error)
	MapRequest(ctx context.Context, in *abi.RequestInput) ([]byte, error)
	MapResult(ctx context.Context, in *abi.ResultInput) ([]byte, error)
}

var _ Mapper = (*runtime.Plugin)(nil)

// PluginError maps an error from a mapping plugin call to the API error the
// client sees: an input the plugin refused is the client's fault (400, with
// the plugin's param and message); anything else — a trap, garbage output, a
// missing hook — is a 500 plugin_error that names the plugin.
func PluginError(err error) error {
	var in *runtime.InputError
	if errors.As(err, &in) {
		e := apierr.InvalidBody(in.Param, "%s", in.Message)
		if in.Code != "" {
			e.Code = in.Code
		}
		return e
	}
	var f *runtime.Fault
	if errors.As(err, &f) {
		// The cause (a trap, the guest's stderr, a stack) goes to the log
		// with the run id, never to the client: it may carry another
		// request's data or the host's paths.
		msg := "plugin " + f.Plugin + ": " + f.Hook + " failed; the detail is in runedge's log"
		if errors.Is(err, runtime.ErrTimeout) {
			msg = "plugin " + f.Plugin + ": " + f.Hook + " exceeded its time budget"
		}
		e := apierr.New(apierr.CodePluginError, msg)
		e.Err = err
		return e
	}
	return err
}

// PluginOutputError is the error for a plugin output the ABI's codec does
// not accept (plugins/abi): a 500 plugin_error naming the plugin and the
// hook, which the run records as failed with reason plugin_error.
func PluginOutputError(plugin string, hook runtime.Hook, err error) error {
	e := apierr.New(apierr.CodePluginError, "plugin "+plugin+": "+hook.String()+": "+err.Error())
	e.Err = err
	return e
}
